// MuJoCo scenes drawn by the page with three.js, as gymnasium's env.render() draws them with MuJoCo's
// renderer: the kernel describes the scene once (gymview/renderers/mujoco_scene.py: geoms on their bodies,
// materials, meshes, textures, lights, the camera's lens) and each frame sends the moving bodies' poses and
// the camera's pose, 7 float32 numbers each (x, y, z, qw, qx, qy, qz).
//
// How materials, lights and the sky look: js/scene3d_look.js; a floor's reflection: js/scene3d_mirror.js.
// Where WebGL runs in software (SwiftShader, llvmpipe: servers, VMs, Colab's CPU runtime) shadows alone cost
// twice the rest of a frame: there the page draws without them, with matte materials, as like env.render().
import * as THREE from "three";

import { colour, decodeTexture, drawnFlat, lightFlats, lightOf, materialOf, skyOf, unlit } from "./scene3d_look.js";
import { drawMirrored, mirrorIn } from "./scene3d_mirror.js";

THREE.ColorManagement.enabled = false; // colours as given, as MuJoCo's renderer takes them
const POSE = 7;

/** scene object -> its three.js scene, built once */
const built = new WeakMap();
/** scene object -> its textures ([THREE.Texture | null]) once decoded, or the promise of them */
const loaded = new WeakMap();
/** one WebGL renderer for every view on the page (browsers cap WebGL contexts at a dozen or so) */
let renderer = null;

/** The bodies' poses, the tendon segments and the camera's pose in a frame's state:
 * { bodies: [[x,y,z,qw,qx,qy,qz]], segments: [[x0,y0,z0,x1,y1,z1,width]], camera: [...] }. */
export function unpackPoses(state, count, segmentCount = 0) {
  const size = POSE * (count + segmentCount + 1);
  if (state.length !== size) throw new Error(`gymview: a MuJoCo frame holds ${size} numbers; got ${state.length}`);
  const rows = Array.from({ length: count + segmentCount }, (_, i) => Array.from(state.subarray(POSE * i, POSE * (i + 1))));
  return { bodies: rows.slice(0, count), segments: rows.slice(count), camera: Array.from(state.subarray(size - POSE)) };
}

/** Set an Object3D's position and orientation from a MuJoCo pose (quaternion w first). */
function place(object, [x, y, z, qw, qx, qy, qz]) {
  object.position.set(x, y, z);
  object.quaternion.set(qx, qy, qz, qw);
}

/** Decode `scene`'s textures (PNG data URLs) once; `onLoad` runs when they are there. */
export function loadMujoco(scene, onLoad = () => {}) {
  if (!loaded.has(scene)) {
    const decoding = Promise.all(scene.textures.map(decodeTexture))
      .catch((error) => {
        console.error("gymview: could not decode the scene's textures", error);
        return []; // drawn without them from now on, not waited for
      })
      .then((textures) => {
        loaded.set(scene, textures);
        disposeBuilt(built.get(scene)); // built again, with its textures
        built.delete(scene);
        onLoad();
      });
    loaded.set(scene, decoding);
  }
  const textures = loaded.get(scene);
  return textures instanceof Promise ? textures : Promise.resolve();
}

/** Whether `scene`'s textures are decoded (true for a scene without textures). */
export const texturesLoaded = (scene) => scene.textures.length === 0 || (loaded.has(scene) && !(loaded.get(scene) instanceof Promise));

const SEGMENTS = 16; // around a sphere, capsule or cylinder (MuJoCo draws 28 by default): in software WebGL 32 cost 3 ms more a frame

/** A geom's shape at its size, in its own frame (MuJoCo's capsules and cylinders lie along z). */
export function shapeOf(geom, scene, meshes) {
  const [a, b, c] = geom.size;
  switch (geom.type) {
    case "plane":
      return plane(geom, scene);
    case "sphere":
      return new THREE.SphereGeometry(a, SEGMENTS, SEGMENTS / 2).rotateX(Math.PI / 2);
    case "ellipsoid":
      return ellipsoid(a, b, c);
    case "capsule":
      return new THREE.CapsuleGeometry(a, 2 * c, SEGMENTS / 4, SEGMENTS).rotateX(Math.PI / 2);
    case "cylinder":
      return new THREE.CylinderGeometry(a, a, 2 * c, SEGMENTS).rotateX(Math.PI / 2);
    case "box":
      return new THREE.BoxGeometry(2 * a, 2 * b, 2 * c);
    case "mesh":
      return meshes[geom.mesh];
    case "hfield":
      return hfieldShape(scene.hfields[geom.hfield], geom);
    default:
      throw new Error(`gymview: the page cannot draw MuJoCo geoms of type ${geom.type}`);
  }
}

/** A plane, with MuJoCo's texture coordinates: s = 0.5 * repeat * x / size - 0.5 (x in metres when uniform). */
function plane(geom, scene) {
  const far = scene.camera.zfar; // a plane of size 0 is infinite
  const [width, height] = [geom.size[0] || far, geom.size[1] || far];
  const shape = new THREE.PlaneGeometry(2 * width, 2 * height);
  const position = shape.attributes.position;
  const uv = shape.attributes.uv;
  for (let i = 0; i < position.count; i += 1) uv.setXY(i, ...planeUv(geom, width, height, position.getX(i), position.getY(i)));
  return shape;
}

function ellipsoid(a, b, c) {
  const shape = new THREE.SphereGeometry(1, SEGMENTS, SEGMENTS / 2).rotateX(Math.PI / 2).scale(a, b, c);
  const { position, normal } = shape.attributes;
  const n = new THREE.Vector3();
  for (let i = 0; i < position.count; i += 1) {
    n.set(position.getX(i) / (a * a), position.getY(i) / (b * b), position.getZ(i) / (c * c)).normalize();
    normal.setXYZ(i, n.x, n.y, n.z);
  }
  return shape;
}

/** The texture coordinates MuJoCo generates for a 2D texture on a plane or heightfield at (x, y) of its own
 * frame: s = 0.5 * repeat * x / size - 0.5 (x in metres when uniform), t likewise from -y. */
function planeUv(geom, width, height, x, y) {
  const [scaleX, scaleY] = geom.texuniform ? [1, 1] : [1 / width, 1 / height];
  return [0.5 * geom.texrepeat[0] * scaleX * x - 0.5, -0.5 * geom.texrepeat[1] * scaleY * y - 0.5];
}

/**
 * A heightfield as MuJoCo's renderer draws it: its top as a strip of triangles each row, each triangle lit by its
 * own normal, above four walls and a floor down to the base's depth.
 * @param {{nrow: number, ncol: number, size: number[], data: string}} hfield @param {object} geom
 */
export function hfieldShape({ nrow, ncol, size, data }, geom) {
  const heights = decode(data, Float32Array);
  const [sx, sy, sz, base] = size;
  const x = (c) => sx * ((2 * c) / (ncol - 1) - 1);
  const y = (r) => sy * ((2 * r) / (nrow - 1) - 1);
  const z = (r, c) => heights[r * ncol + c] * sz;
  // the top's 2 triangles a square, 2 a wall piece, 2 for the floor: written straight into one array (a
  // heightfield of 500x500 is half a million triangles)
  const triangles = 2 * (nrow - 1) * (ncol - 1) + 4 * (nrow - 1) + 4 * (ncol - 1) + 2;
  const position = new Float32Array(9 * triangles);
  let at = 0;
  const corner = (px, py, pz) => {
    position[at] = px;
    position[at + 1] = py;
    position[at + 2] = pz;
    at += 3;
  };
  const quad = (a, b, c, d) => [a, b, c, a, c, d].forEach((point) => corner(...point));
  for (let r = 0; r < nrow - 1; r += 1) {
    // MuJoCo's strip, each triangle turned counter-clockwise seen from above: (r+1, c), (r, c), (r+1, c+1), ...
    for (let c = 0; c < ncol - 1; c += 1) {
      corner(x(c), y(r + 1), z(r + 1, c));
      corner(x(c), y(r), z(r, c));
      corner(x(c + 1), y(r + 1), z(r + 1, c + 1));
      corner(x(c), y(r), z(r, c));
      corner(x(c + 1), y(r), z(r, c + 1));
      corner(x(c + 1), y(r + 1), z(r + 1, c + 1));
    }
  }
  for (let r = 0; r < nrow - 1; r += 1) {
    quad([-sx, y(r + 1), -base], [-sx, y(r), -base], [-sx, y(r), z(r, 0)], [-sx, y(r + 1), z(r + 1, 0)]);
    quad([sx, y(r), -base], [sx, y(r + 1), -base], [sx, y(r + 1), z(r + 1, ncol - 1)], [sx, y(r), z(r, ncol - 1)]);
  }
  for (let c = 0; c < ncol - 1; c += 1) {
    quad([x(c), -sy, -base], [x(c + 1), -sy, -base], [x(c + 1), -sy, z(0, c + 1)], [x(c), -sy, z(0, c)]);
    quad([x(c + 1), sy, -base], [x(c), sy, -base], [x(c), sy, z(nrow - 1, c)], [x(c + 1), sy, z(nrow - 1, c + 1)]);
  }
  quad([-sx, -sy, -base], [-sx, sy, -base], [sx, sy, -base], [sx, -sy, -base]);
  const uv = new Float32Array((position.length / 3) * 2);
  for (let i = 0; i < position.length / 3; i += 1) uv.set(planeUv(geom, sx, sy, position[3 * i], position[3 * i + 1]), 2 * i);
  const shape = new THREE.BufferGeometry();
  shape.setAttribute("position", new THREE.BufferAttribute(position, 3));
  shape.setAttribute("uv", new THREE.BufferAttribute(uv, 2));
  shape.computeVertexNormals(); // unshared corners: each triangle's own normal, as MuJoCo lights it
  return shape;
}

const decode = (text, Type) => {
  const bytes = Uint8Array.from(atob(text), (ch) => ch.charCodeAt(0));
  return new Type(bytes.buffer);
};

/** A mesh's triangles, each corner with its own normal and, where the mesh has them, its own texture coordinates
 * (MuJoCo keeps vertex, normal and texture coordinate indices apart). */
export function meshShape({ vertices, normals, faces, face_normals: faceNormals, texcoords, face_texcoords: faceTexcoords }) {
  const [points, directions] = [decode(vertices, Float32Array), decode(normals, Float32Array)];
  const [corners, cornerNormals] = [decode(faces, Int32Array), decode(faceNormals, Int32Array)];
  const [coordinates, cornerCoordinates] = texcoords ? [decode(texcoords, Float32Array), decode(faceTexcoords, Int32Array)] : [];
  const position = new Float32Array(3 * corners.length);
  const normal = new Float32Array(3 * corners.length);
  const uv = coordinates && new Float32Array(2 * corners.length);
  corners.forEach((vertex, i) => {
    position.set(points.subarray(3 * vertex, 3 * vertex + 3), 3 * i);
    normal.set(directions.subarray(3 * cornerNormals[i], 3 * cornerNormals[i] + 3), 3 * i);
    uv?.set(coordinates.subarray(2 * cornerCoordinates[i], 2 * cornerCoordinates[i] + 2), 2 * i);
  });
  if (!uv) creased(position, normal);
  const shape = new THREE.BufferGeometry();
  shape.setAttribute("position", new THREE.BufferAttribute(position, 3));
  shape.setAttribute("normal", new THREE.BufferAttribute(normal, 3));
  if (uv) shape.setAttribute("uv", new THREE.BufferAttribute(uv, 2));
  return shape;
}

/** Where a corner's normal turns from its face's by a cosine under 0.8 (a crease), the face's, as mjr_uploadMesh does. */
function creased(position, normal) {
  const [a, b, c, face, own] = [0, 1, 2, 3, 4].map(() => new THREE.Vector3());
  for (let corner = 0; corner < position.length; corner += 9) {
    [a, b, c].forEach((point, i) => point.fromArray(position, corner + 3 * i));
    face.subVectors(b, a).cross(c.sub(a)).normalize();
    for (let i = 0; i < 9; i += 3) if (own.fromArray(normal, corner + i).dot(face) < 0.8) face.toArray(normal, corner + i);
  }
}

const unitCylinder = new THREE.CylinderGeometry(1, 1, 2, SEGMENTS, 1, true).rotateX(Math.PI / 2);
const unitSphere = new THREE.SphereGeometry(1, SEGMENTS, SEGMENTS / 2);

/** The meshes of a tendon's segments (a capsule each, as MuJoCo draws them: a cylinder and two round ends),
 * hidden until a frame places them. */
function tendonSegments(tendon, scene, textures, software, shadows) {
  const material = materialOf({ ...tendon, size: [1, 1, 1], texrepeat: [1, 1], texuniform: false }, scene, textures, software);
  return Array.from({ length: tendon.segments }, () => {
    const parts = [unitCylinder, unitSphere, unitSphere].map((shape) => {
      const mesh = new THREE.Mesh(shape, material);
      mesh.castShadow = mesh.receiveShadow = shadows;
      mesh.visible = false;
      return mesh;
    });
    return parts;
  });
}

const from = new THREE.Vector3();
const to = new THREE.Vector3();
const zAxis = new THREE.Vector3(0, 0, 1);

/** Place a tendon segment's capsule between its ends, `width` its radius (0: not drawn this frame). */
function placeSegment([cylinder, start, end], [x0, y0, z0, x1, y1, z1, width]) {
  const shown = width > 0;
  [cylinder, start, end].forEach((mesh) => (mesh.visible = shown));
  if (!shown) return;
  from.set(x0, y0, z0);
  to.set(x1, y1, z1);
  start.position.copy(from);
  end.position.copy(to);
  start.scale.setScalar(width);
  end.scale.setScalar(width);
  const length = from.distanceTo(to);
  cylinder.position.addVectors(from, to).multiplyScalar(0.5);
  cylinder.scale.set(width, width, length / 2);
  if (length > 0) cylinder.quaternion.setFromUnitVectors(zAxis, to.sub(from).divideScalar(length));
}

/** A geom's three.js mesh, placed on its body; `userData.flat` for one drawn unlit. */
function meshOf(geom, scene, meshes, textures, software, shadows) {
  const material = materialOf(geom, scene, textures, software);
  const flat = drawnFlat(geom, scene, textures, software);
  const mesh = new THREE.Mesh(shapeOf(geom, scene, meshes), flat ? unlit(material) : material);
  place(mesh, [...geom.pos, ...geom.quat]);
  mesh.castShadow = shadows && geom.type !== "plane";
  mesh.receiveShadow = shadows;
  if (flat) mesh.userData.flat = { base: material.color.clone(), normal: new THREE.Vector3(0, 0, 1).applyQuaternion(mesh.quaternion) };
  return mesh;
}

/** The three.js scene of a MuJoCo scene description: its bodies (posed per frame), geoms, lights and camera;
 * `software`: for WebGL drawn in software (no shadows, matte materials). */
export function buildMujoco(scene, textures = null, software = false) {
  const root = new THREE.Scene();
  const { fovy, znear, zfar } = scene.camera;
  const camera = new THREE.PerspectiveCamera(fovy, scene.width / scene.height, znear, zfar);
  root.add(camera);
  const bodies = Array.from({ length: scene.bodies }, () => {
    const body = new THREE.Group();
    root.add(body);
    return body;
  });
  const meshes = scene.meshes.map(meshShape);
  const shadows = !software && scene.shadows && scene.lights.some((light) => light.castshadow);
  const flats = [];
  const placed = scene.geoms.map((geom) => {
    const mesh = meshOf(geom, scene, meshes, textures, software, shadows);
    (geom.body >= 0 ? bodies[geom.body] : root).add(mesh);
    if (mesh.userData.flat) flats.push({ material: mesh.material, ...mesh.userData.flat });
    return mesh;
  });
  const segments = (scene.tendons ?? []).flatMap((tendon) => tendonSegments(tendon, scene, textures, software, shadows));
  segments.flat().forEach((mesh) => root.add(mesh));
  const ambient = scene.lights.reduce((sum, light) => sum.map((x, i) => x + light.ambient[i]), [0, 0, 0]);
  root.add(new THREE.AmbientLight(colour(ambient)));
  for (const light of scene.lights) {
    lightOf(light, scene, light.headlight ? camera : light.body >= 0 ? bodies[light.body] : root, shadows);
  }
  const sky = skyOf(scene, textures);
  return { root, camera, bodies, segments, sky: sky && new THREE.Scene().add(sky), shadows, skyDrawn: null, flats, lights: scene.lights, mirror: mirrorIn(scene, placed) };
}

/** The three.js scene of `scene`, built at its first frame (and again once its textures are decoded). */
export function builtFor(scene, software = false) {
  if (!built.has(scene)) {
    const textures = loaded.get(scene);
    built.set(scene, buildMujoco(scene, Array.isArray(textures) ? textures : null, software));
  }
  return built.get(scene);
}

/** Let go of what the page holds for `scene` (a view closed, or its scene replaced): its buffers and
 * textures in WebGL stay allocated until disposed, however long the page stays open. */
export function forgetMujoco(scene) {
  disposeBuilt(built.get(scene));
  const textures = loaded.get(scene);
  if (Array.isArray(textures)) textures.forEach((texture) => texture?.dispose());
  built.delete(scene);
  loaded.delete(scene);
}

/** Free a built scene's buffers, materials, shadow maps and mirror (its textures stay, shared with a rebuild). */
function disposeBuilt(made) {
  for (const root of made ? [made.root, made.sky].filter(Boolean) : []) {
    root.traverse((object) => {
      if (object.geometry !== unitCylinder && object.geometry !== unitSphere) object.geometry?.dispose(); // shared
      object.material?.dispose();
      object.shadow?.map?.dispose();
    });
  }
  made?.mirror?.target.dispose();
}

/** Pose a built scene for a frame's state. */
export function poseMujoco(made, state) {
  const { bodies, segments, camera } = unpackPoses(state, made.bodies.length, made.segments.length);
  bodies.forEach((pose, i) => place(made.bodies[i], pose));
  segments.forEach((ends, i) => placeSegment(made.segments[i], ends));
  place(made.camera, camera);
  if (made.flats.length) {
    made.camera.updateMatrixWorld();
    lightFlats(made);
  }
  if (made.sky) made.sky.children[0].position.copy(made.camera.position);
}

// Where WebGL draws on the CPU, frames of at least SCALED_FROM pixels are drawn at this share of the
// shown width and height and scaled up when shown: the CPU's time goes with the pixels drawn. Smaller
// boxes, such as a grid's cells, lose too much detail. A grid's cells go without the floor's reflection there.
const SOFTWARE_SCALE = 0.75;
const SCALED_FROM = 320 * 320;

/** Whether WebGL's renderer (`gl.RENDERER`, or the unmasked name where the browser gives it) draws on the CPU. */
export const drawsInSoftware = (name) => /swiftshader|llvmpipe|softpipe|software|basic render/i.test(name);

function rendererName(gl) {
  const info = gl.getExtension("WEBGL_debug_renderer_info");
  return String(gl.getParameter(info ? info.UNMASKED_RENDERER_WEBGL : gl.RENDERER));
}

/** The page's one WebGL renderer, made at the first frame drawn. */
function webgl(width, height) {
  if (renderer === null) {
    const canvas = typeof OffscreenCanvas === "undefined" ? document.createElement("canvas") : new OffscreenCanvas(width, height);
    renderer = new THREE.WebGLRenderer({ canvas, alpha: true, antialias: false, preserveDrawingBuffer: false });
    renderer.outputColorSpace = THREE.LinearSRGBColorSpace;
    renderer.shadowMap.type = THREE.PCFShadowMap;
    renderer.setPixelRatio(1);
    renderer.software = drawsInSoftware(rendererName(renderer.getContext()));
  }
  return renderer;
}

/** The share of a width x height box's width and height that a MuJoCo scene is drawn at on this page. */
export function drawnScale(width, height) {
  return webgl(width, height).software && width * height >= SCALED_FROM ? SOFTWARE_SCALE : 1;
}

/** Draw `state` of a MuJoCo `scene` on the 2D `context`, in the width x height box at (left, top) (a grid's cell
 * if `inGrid`): drawn at `scale` of that size (drawnScale's, unless the box is the size to draw at), then fitted. */
export function drawMujoco(context, scene, state, left, top, width, height, scale = drawnScale(width, height), inGrid = false) {
  const drawing = webgl(width, height);
  const made = builtFor(scene, drawing.software);
  poseMujoco(made, state);
  made.camera.aspect = width / height;
  made.camera.updateProjectionMatrix();
  drawing.shadowMap.enabled = made.shadows;
  const canvas = drawing.domElement; // resized only when the size changes: resizing reallocates its buffers
  const [drawnWidth, drawnHeight] = [Math.max(1, Math.floor(width * scale)), Math.max(1, Math.floor(height * scale))];
  if (canvas.width !== drawnWidth || canvas.height !== drawnHeight) drawing.setSize(drawnWidth, drawnHeight, false);
  if (made.sky) context.drawImage(skyBehind(made, drawing), left, top, width, height);
  if (made.mirror) drawMirrored(made, drawing, drawnWidth, drawnHeight, !(drawing.software && inGrid));
  drawing.setClearAlpha(made.sky ? 0 : 1); // the bodies over the sky; MuJoCo's black where there is none
  drawing.render(made.root, made.camera);
  context.drawImage(canvas, left, top, width, height);
}

/** The sky as the camera sees it, drawn again only when the camera turns or the size changes: a camera
 * that follows a body moves but does not turn, and the sky is at infinity (in software, a third of a frame). */
function skyBehind(made, drawing) {
  const { width, height } = drawing.domElement;
  const seen = `${width}x${height} ${made.camera.fov} ${made.camera.quaternion.toArray().map((q) => q.toFixed(5))}`;
  if (made.skyDrawn?.seen !== seen) {
    made.root.updateMatrixWorld(); // the camera's pose, for a scene it is not in
    drawing.setClearAlpha(1);
    drawing.render(made.sky, made.camera);
    const picture = made.skyDrawn?.picture ?? document.createElement("canvas");
    [picture.width, picture.height] = [width, height];
    picture.getContext("2d").drawImage(drawing.domElement, 0, 0);
    made.skyDrawn = { seen, picture };
  }
  return made.skyDrawn.picture;
}
