// A MuJoCo floor's reflection, as MuJoCo's renderer draws it: the first opaque plane (or box, by its top face)
// whose material has a reflectance mirrors the scene's other geoms and lights, and shows
// `reflectance * mirrored colour` added to its own lit colour. The mirrored scene is drawn into a picture half
// the frame's size, from the camera, with the near plane laid on the mirror (so only what is above the floor
// is mirrored); the floor's shader adds that picture at each of its pixels.
import * as THREE from "three";

/** The geom MuJoCo mirrors in, among `geoms` (a scene's, in order): the first opaque plane or box with a
 * reflectance; -1 where none. MuJoCo mirrors in one at most. */
export const mirrorGeom = (geoms) =>
  geoms.findIndex((geom) => geom.reflectance > 0 && (geom.type === "plane" || geom.type === "box") && geom.rgba[3] >= 0.995);

/** The mirror of a MuJoCo `scene` whose geoms are `meshes` (in order), or null: none, or reflections turned off. */
export function mirrorIn(scene, meshes) {
  const index = scene.reflection === false ? -1 : mirrorGeom(scene.geoms);
  return index < 0 ? null : mirrorOf(meshes[index], scene.geoms[index]);
}

/** Make `mesh` (the geom `geom`'s) a mirror: its material adds the mirrored picture, scaled by the geom's
 * reflectance, on its faces that look along its z axis (a plane's face, a box's top). */
function mirrorOf(mesh, geom) {
  const target = new THREE.WebGLRenderTarget(1, 1, { depthBuffer: true });
  const uniforms = {
    mirrorMap: { value: target.texture },
    mirrorStrength: { value: 0 },
    mirrorSize: { value: new THREE.Vector2(1, 1) },
  };
  const material = mesh.material;
  const before = material.onBeforeCompile.bind(material);
  const key = material.customProgramCacheKey.bind(material);
  material.onBeforeCompile = (shader, renderer) => {
    before(shader, renderer);
    Object.assign(shader.uniforms, uniforms);
    shader.vertexShader = shader.vertexShader
      .replace("#include <common>", "#include <common>\nvarying float vMirrorFace;")
      .replace("#include <begin_vertex>", "#include <begin_vertex>\nvMirrorFace = step(0.5, normal.z);");
    shader.fragmentShader = shader.fragmentShader
      .replace("#include <common>", "#include <common>\nuniform sampler2D mirrorMap;\nuniform float mirrorStrength;\nuniform vec2 mirrorSize;\nvarying float vMirrorFace;")
      .replace(
        "#include <opaque_fragment>",
        "#include <opaque_fragment>\ngl_FragColor.rgb += mirrorStrength * vMirrorFace * texture2D(mirrorMap, gl_FragCoord.xy / mirrorSize).rgb;",
      );
  };
  material.customProgramCacheKey = () => `${key()} gymview-mirror`;
  material.needsUpdate = true;
  return { mesh, target, uniforms, reflectance: geom.reflectance, offset: geom.type === "box" ? geom.size[2] : 0, camera: new THREE.PerspectiveCamera() };
}

// The mirrored picture is drawn at this share of the frame's width and height: a reflection is faint (MuJoCo's
// floors mirror at 0.2-0.5), so a quarter of the pixels shows it as well, for less of software WebGL's time.
const MIRROR_SCALE = 0.5;

const normal = new THREE.Vector3();
const point = new THREE.Vector3();
const seen = new THREE.Vector3();
const down = new THREE.Vector3();
const plane = new THREE.Plane();
const clip = new THREE.Vector4();
const corner = new THREE.Vector4();
const reflection = new THREE.Matrix4();

/** Draw the mirrored scene of `made` (its root posed, its camera placed and its lens set) for a frame of
 * width x height pixels; none where `shown` is false, nor (as in MuJoCo) for a camera below the mirror. */
export function drawMirrored(made, drawing, width, height, shown = true) {
  const { mirror, root, camera } = made;
  root.updateMatrixWorld();
  const elements = mirror.mesh.matrixWorld.elements;
  normal.set(elements[8], elements[9], elements[10]).normalize();
  point.setFromMatrixPosition(mirror.mesh.matrixWorld).addScaledVector(normal, mirror.offset);
  seen.setFromMatrixPosition(camera.matrixWorld).sub(point);
  const eye = mirror.camera;
  eye.matrixWorld.copy(camera.matrixWorld);
  eye.matrixWorldInverse.copy(camera.matrixWorldInverse);
  eye.projectionMatrix.copy(camera.projectionMatrix);
  eye.matrixAutoUpdate = eye.matrixWorldAutoUpdate = false;
  // a camera level with the mirror would have the near plane through its eye; a mirror out of view shows nothing
  const drawn = shown && seen.dot(normal) > camera.near && nearPlaneOn(eye, normal, point);
  mirror.uniforms.mirrorStrength.value = drawn ? mirror.reflectance : 0;
  if (!drawn) return;
  eye.projectionMatrixInverse.copy(eye.projectionMatrix).invert();
  const [drawnWidth, drawnHeight] = [Math.ceil(width * MIRROR_SCALE), Math.ceil(height * MIRROR_SCALE)];
  if (mirror.target.width !== drawnWidth || mirror.target.height !== drawnHeight) mirror.target.setSize(drawnWidth, drawnHeight);
  mirror.uniforms.mirrorSize.value.set(width, height);
  // the world mirrored in the plane: x -> x - 2 ((x - point) . normal) normal
  const [x, y, z] = [normal.x, normal.y, normal.z];
  const d = 2 * point.dot(normal);
  reflection.set(1 - 2 * x * x, -2 * x * y, -2 * x * z, d * x, -2 * x * y, 1 - 2 * y * y, -2 * y * z, d * y, -2 * x * z, -2 * y * z, 1 - 2 * z * z, d * z, 0, 0, 0, 1);
  // MuJoCo's mirrored pass has no shadows: the shadow map (of the unmirrored scene) is neither drawn again nor
  // looked up; switched per object, as a uniform, so that no material is compiled again
  const receivers = [];
  root.traverse((object) => object.receiveShadow && receivers.push(object));
  const updates = drawing.shadowMap.autoUpdate;
  root.matrixAutoUpdate = false;
  root.matrix.copy(reflection);
  root.matrixWorldNeedsUpdate = true;
  mirror.mesh.visible = false;
  receivers.forEach((object) => (object.receiveShadow = false));
  drawing.shadowMap.autoUpdate = false;
  try {
    drawing.setRenderTarget(mirror.target);
    drawing.setClearColor(0x000000, 1);
    drawing.render(root, eye);
  } finally {
    drawing.setRenderTarget(null);
    drawing.shadowMap.autoUpdate = updates;
    receivers.forEach((object) => (object.receiveShadow = true));
    mirror.mesh.visible = true;
    root.matrix.identity();
    root.matrixAutoUpdate = true;
    root.updateMatrixWorld(true);
  }
}

/** Lay `eye`'s near plane on the mirror, keeping what lies beyond it from the camera (Lengyel's oblique near
 * plane): the mirrored images of what is above the floor, and not those of anything below it. False, and the lens
 * left as it was, where the mirror is out of view. */
function nearPlaneOn(eye, up, at) {
  plane.setFromNormalAndCoplanarPoint(down.copy(up).negate(), at).applyMatrix4(eye.matrixWorldInverse);
  clip.set(plane.normal.x, plane.normal.y, plane.normal.z, plane.constant);
  const p = eye.projectionMatrix.elements;
  corner.set((Math.sign(clip.x) + p[8]) / p[0], (Math.sign(clip.y) + p[9]) / p[5], -1, (1 + p[10]) / p[14]);
  if (clip.dot(corner) <= 0) return false; // the frustum's far corner beyond the mirror is not: the mirror is out of view
  clip.multiplyScalar(2 / clip.dot(corner));
  p[2] = clip.x;
  p[6] = clip.y;
  p[10] = clip.z + 1;
  p[14] = clip.w;
  return true;
}
