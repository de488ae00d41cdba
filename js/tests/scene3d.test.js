// MuJoCo scenes with three.js, without WebGL: the poses a frame holds, and the three.js scene built from a
// description (what gymview/renderers/mujoco_scene.py sends). `node --test js/tests/`.
import assert from "node:assert/strict";
import { test } from "node:test";

import { buildMujoco, builtFor, drawsInSoftware, forgetMujoco, hfieldShape, meshShape, poseMujoco, unpackPoses } from "../scene3d.js";
import { spotPenumbra } from "../scene3d_look.js";

const base64 = (Type, values) => Buffer.from(new Type(values).buffer).toString("base64");

/** A floor in the world, a box on body 0 and a tetrahedron mesh on body 1, lit by the headlight and a
 * shadow-casting light overhead. */
function description() {
  const geom = { rgba: [0.8, 0.6, 0.4, 1], emission: 0, specular: 0.5, shininess: 0.5, reflectance: 0,
    texture: -1, texrepeat: [1, 1], texuniform: false, mesh: -1, quat: [1, 0, 0, 0] };
  return {
    kind: "mujoco", width: 64, height: 48, bodies: 2,
    geoms: [
      { ...geom, type: "plane", size: [2, 3, 0.1], body: -1, pos: [0, 0, 0], texrepeat: [4, 6] },
      { ...geom, type: "box", size: [0.1, 0.2, 0.3], body: 0, pos: [0, 0, 0.5] },
      { ...geom, type: "mesh", size: [0, 0, 0], body: 1, pos: [0, 0, 0], mesh: 0 },
    ],
    meshes: [{
      vertices: base64(Float32Array, [0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1]),
      normals: base64(Float32Array, [0, 0, -1, 0, 0, 1]),
      faces: base64(Int32Array, [0, 2, 1, 1, 2, 3]),
      face_normals: base64(Int32Array, [0, 0, 0, 1, 1, 1]),
    }],
    textures: [],
    lights: [
      { type: "directional", headlight: true, ambient: [0.1, 0.1, 0.1], diffuse: [0.4, 0.4, 0.4],
        specular: [0.5, 0.5, 0.5], castshadow: false },
      { type: "directional", headlight: false, body: -1, pos: [0, 0, 3], dir: [0, 0, -1], ambient: [0, 0, 0],
        diffuse: [1, 1, 1], specular: [0.1, 0.1, 0.1], attenuation: [1, 0, 0], cutoff: 45, exponent: 10,
        castshadow: true },
    ],
    camera: { fovy: 45, znear: 0.01, zfar: 50 },
    shadows: true, shadow_clip: 4, shadow_size: 1024, skybox: true,
  };
}

test("a frame holds each moving body's pose, then the camera's", () => {
  const state = Float32Array.from({ length: 21 }, (_, i) => i);
  const { bodies, camera } = unpackPoses(state, 2);
  assert.deepEqual(bodies, [[0, 1, 2, 3, 4, 5, 6], [7, 8, 9, 10, 11, 12, 13]]);
  assert.deepEqual(camera, [14, 15, 16, 17, 18, 19, 20]);
  assert.throws(() => unpackPoses(state.subarray(1), 2), /holds 21 numbers; got 20/);
});

test("the scene is built once: geoms on their bodies, lights, the camera's lens", () => {
  const made = buildMujoco(description());
  assert.equal(made.bodies.length, 2);
  assert.deepEqual(made.bodies.map((body) => body.children.length), [1, 1]);
  const [box] = made.bodies[0].children;
  assert.deepEqual(box.position.toArray(), [0, 0, 0.5]);
  box.geometry.computeBoundingBox();
  assert.deepEqual(box.geometry.boundingBox.max.toArray().map((x) => +x.toFixed(6)), [0.1, 0.2, 0.3]);
  const floor = made.root.children.find((child) => child.geometry?.type === "PlaneGeometry");
  // MuJoCo's texture coordinates: s = 0.5 * repeat * x / size - 0.5 across the plane
  const uv = floor.geometry.attributes.uv;
  assert.deepEqual([uv.getX(0), uv.getY(0)], [0.5 * 4 * -1 - 0.5, -0.5 * 6 * 1 - 0.5]);
  assert.equal(floor.receiveShadow, true);
  assert.equal(box.castShadow, true);
  assert.equal(made.camera.fov, 45);
  assert.equal(made.camera.children.filter((child) => child.isDirectionalLight).length, 1); // the headlight
  const overhead = made.root.children.find((child) => child.isDirectionalLight);
  assert.equal(overhead.castShadow, true);
  assert.ok(Math.abs(overhead.color.r - Math.PI) < 1e-6); // three.js's Lambert divides by pi
  assert.equal(made.sky, null); // no skybox texture decoded (that needs the browser's image decoder)
});

test("a mesh's corners get their own normals (their face's at a crease) and texture coordinates", () => {
  const shape = meshShape(description().meshes[0]);
  assert.equal(shape.attributes.position.count, 6);
  assert.deepEqual(Array.from(shape.attributes.position.array.slice(3, 6)), [0, 1, 0]); // corner 1: vertex 2
  assert.deepEqual(Array.from(shape.attributes.normal.array.slice(0, 3)), [0, 0, -1]); // its own, near its face's
  const third = Math.sqrt(1 / 3); // the second face's own normals (0, 0, 1) turn 55 degrees from it: a crease
  shape.attributes.normal.array.slice(9, 18).forEach((n) => assert.ok(Math.abs(n - third) < 1e-6));
  assert.equal(shape.attributes.uv, undefined); // none of its own: the material maps its texture, if any
  const painted = meshShape({ ...description().meshes[0], texcoords: base64(Float32Array, [0, 0, 1, 0, 0.5, 1]),
    face_texcoords: base64(Int32Array, [0, 1, 2, 2, 1, 0]) }); // fmt: skip
  assert.deepEqual(Array.from(painted.attributes.uv.array), [0, 0, 1, 0, 0.5, 1, 0.5, 1, 1, 0, 0, 0]); // by corner
  assert.deepEqual(Array.from(painted.attributes.normal.array.slice(15, 18)), [0, 0, 1]); // with them, its own normals
});

test("a tendon's segments are capsules between their ends, hidden where a frame has none", () => {
  const tendon = { rgba: [1, 0, 0, 1], emission: 0, specular: 0.5, shininess: 0.5, reflectance: 0, texture: -1, segments: 2 };
  const made = buildMujoco({ ...description(), tendons: [tendon] });
  assert.equal(made.segments.length, 2);
  const state = new Float32Array(7 * (2 + 2 + 1));
  state.set([0, 0, 1, 0, 0, 3, 0.05], 14); // segment 0: from (0, 0, 1) to (0, 0, 3); segment 1 unused
  state[7 * 4] = 1; // the camera's x
  poseMujoco(made, state);
  const [[cylinder, start, end], [unused]] = made.segments;
  assert.deepEqual(cylinder.position.toArray(), [0, 0, 2]);
  assert.deepEqual(cylinder.scale.toArray().map((x) => +x.toFixed(6)), [0.05, 0.05, 1]);
  assert.deepEqual([start.position.z, end.position.z, start.scale.x], [1, 3, Math.fround(0.05)]);
  assert.equal(cylinder.material.color.r, 1);
  assert.ok(cylinder.visible && !unused.visible);
  state.set([0, 0, 0, 2, 0, 0, 0.05], 14); // along x now: the capsule turns
  poseMujoco(made, state);
  const axis = new (cylinder.up.constructor)(0, 0, 1).applyQuaternion(cylinder.quaternion);
  assert.deepEqual(axis.toArray().map((x) => +x.toFixed(6) + 0), [1, 0, 0]);
  assert.throws(() => poseMujoco(made, state.subarray(7)), /holds 35 numbers; got 28/);
});

test("a heightfield is MuJoCo's: its top at its elevations, each triangle lit by its own normal, walls down to its base", () => {
  // 2 rows of 3: the middle of the far row (y = +1) raised to the top's height
  const hfield = { nrow: 2, ncol: 3, size: [2, 1, 0.5, 0.25], data: base64(Float32Array, [0, 0, 0, 0, 1, 0]) };
  const geom = { texrepeat: [1, 1], texuniform: false };
  const shape = hfieldShape(hfield, geom);
  const { position, normal, uv } = shape.attributes;
  assert.equal(position.count, 3 * (4 + 2 * 2 + 2 * 4 + 2)); // the top's 4 triangles, 2 side and 4 end quads, the floor
  const corners = Array.from({ length: position.count }, (_, i) => [position.getX(i), position.getY(i), position.getZ(i)]);
  assert.ok(corners.some(([x, y, z]) => x === 0 && y === 1 && z === 0.5));
  assert.equal(Math.min(...corners.map(([, , z]) => z)), -0.25);
  assert.deepEqual([Math.min(...corners.map(([x]) => x)), Math.max(...corners.map(([x]) => x))], [-2, 2]);
  for (let i = 0; i < 12; i += 1) assert.ok(normal.getZ(i) > 0, `the top faces up (corner ${i})`);
  // the first triangle rises along x towards the raised corner: its normal leans to -x, the same at its three corners
  assert.ok(normal.getX(0) < 0 && normal.getX(0) === normal.getX(1) && normal.getX(1) === normal.getX(2));
  assert.deepEqual([normal.getX(12), normal.getY(12), normal.getZ(12)], [-1, 0, 0]); // the first wall, at -x
  assert.deepEqual([normal.getX(position.count - 1), normal.getZ(position.count - 1)], [0, -1]); // the floor
  assert.deepEqual([uv.getX(0), uv.getY(0)], [0.5 * -2 / 2 - 0.5, -0.5 * 1 / 1 - 0.5]); // as a plane's, at (-2, 1)
});

test("a frame poses the bodies and the camera (MuJoCo's quaternions are w first)", () => {
  const made = buildMujoco(description());
  const half = Math.SQRT1_2;
  poseMujoco(made, Float32Array.from([1, 2, 3, 1, 0, 0, 0, 4, 5, 6, half, half, 0, 0, 0, -3, 2, half, half, 0, 0]));
  assert.deepEqual(made.bodies[0].position.toArray(), [1, 2, 3]);
  assert.deepEqual(made.bodies[1].position.toArray(), [4, 5, 6]);
  const q = made.bodies[1].quaternion;
  assert.deepEqual([q.x, q.y, q.z, q.w].map((x) => +x.toFixed(6)), [0.707107, 0, 0, 0.707107]);
  assert.deepEqual(made.camera.position.toArray(), [0, -3, 2]);
});

test("where WebGL draws in software the scene has no shadows and matte materials", () => {
  const full = buildMujoco(description());
  const light = buildMujoco(description(), null, true);
  const meshes = (made) => {
    const found = [];
    made.root.traverse((object) => object.isMesh && found.push(object));
    return found;
  };
  assert.equal(full.shadows, true);
  assert.ok(meshes(full).every((mesh) => mesh.material.type === "MeshPhongMaterial"));
  assert.ok(meshes(full).some((mesh) => mesh.castShadow));
  assert.equal(light.shadows, false);
  const floor = (mesh) => mesh.geometry.type === "PlaneGeometry";
  assert.ok(meshes(light).every((mesh) => mesh.material.type === (floor(mesh) ? "MeshBasicMaterial" : "MeshLambertMaterial")));
  assert.ok(meshes(light).every((mesh) => !mesh.castShadow));
  const casters = (made) => { const l = []; made.root.traverse((o) => o.isLight && o.castShadow && l.push(o)); return l; };
  assert.equal(casters(full).length, 1);
  assert.equal(casters(light).length, 0);
});

test("software WebGL is told from hardware by the renderer's name", () => {
  for (const name of ["ANGLE (Google, Vulkan 1.3.0 (SwiftShader Device (Subzero) (0x0000C0DE)), SwiftShader driver)",
    "llvmpipe (LLVM 15.0.7, 256 bits)", "Microsoft Basic Render Driver"]) assert.ok(drawsInSoftware(name), name);
  for (const name of ["ANGLE (NVIDIA, NVIDIA GeForce RTX 4090 Direct3D11 vs_5_0 ps_5_0)", "Apple M2", "Mali-G78"]) {
    assert.ok(!drawsInSoftware(name), name);
  }
});

test("a forgotten scene frees its buffers and materials, and is built again if drawn again", () => {
  const scene = description();
  const made = builtFor(scene);
  assert.equal(builtFor(scene), made); // built once
  const parts = new Set();
  for (const root of [made.root, made.sky].filter(Boolean)) {
    root.traverse((object) => [object.geometry, object.material].filter(Boolean).forEach((part) => parts.add(part)));
  }
  const disposed = new Set();
  parts.forEach((part) => part.addEventListener("dispose", () => disposed.add(part)));
  forgetMujoco(scene);
  assert.ok(parts.size >= 6 && disposed.size === parts.size, `${disposed.size} of ${parts.size} disposed`);
  assert.notEqual(builtFor(scene), made);
});

test("in software a floor lit by directional lights is drawn unlit, in the colour Lambert's lights give it", () => {
  const made = buildMujoco(description(), null, true);
  const floor = made.root.children.find((child) => child.geometry?.type === "PlaneGeometry");
  assert.equal(floor.material.type, "MeshBasicMaterial");
  const looking = (qw, qx) => Float32Array.from([...Array(14).fill(0), 0, 0, 5, qw, qx, 0, 0]);
  poseMujoco(made, looking(1, 0)); // straight down: the headlight and the overhead light both fall square on
  // rgb (0.8, 0.6, 0.4) times ambient 0.1 + headlight 0.4 + overhead 1
  assert.deepEqual(floor.material.color.toArray().map((x) => +x.toFixed(4)), [1.2, 0.9, 0.6]);
  poseMujoco(made, looking(Math.SQRT1_2, Math.SQRT1_2)); // turned to the horizon: the headlight grazes the floor
  assert.deepEqual(floor.material.color.toArray().map((x) => +x.toFixed(4)), [0.88, 0.66, 0.44]);
  const lit = buildMujoco(description()).root.children.find((child) => child.geometry?.type === "PlaneGeometry");
  assert.equal(lit.material.type, "MeshPhongMaterial"); // with a GPU: lit, and shadowed
});

test("a spot light shines with its colour inside its cutoff, its exponent carried to the shader", () => {
  const scene = description();
  scene.bodies = 3; // the third pose is a light's that follows a body without turning
  scene.lights[1] = { ...scene.lights[1], type: "spot", body: 2, pos: [0, 0, 0], diffuse: [0.6, 0.4, 0.2], cutoff: 30 };
  const made = buildMujoco(scene);
  const [spot] = made.bodies[2].children.filter((child) => child.isSpotLight);
  assert.equal(spot.intensity, 1);
  assert.ok(Math.abs(spot.color.r - 0.6 * Math.PI) < 1e-6);
  assert.ok(Math.abs(spot.angle - Math.PI / 6) < 1e-9);
  assert.ok(Math.abs(spotPenumbra(Math.PI / 6, 0)) < 1e-12); // no falloff: a hard edge
  const carried = (cutoff, exponent) => { // what the shader reads back from three.js's penumbra cosine
    const cosine = Math.cos(cutoff * (1 - spotPenumbra(cutoff, exponent)));
    return (128 * (cosine - Math.cos(cutoff))) / (1 - Math.cos(cutoff));
  };
  for (const [cutoff, exponent] of [[Math.PI / 6, 10], [Math.PI / 4, 1], [0.1, 64], [Math.PI / 2, 128]]) {
    assert.ok(Math.abs(carried(cutoff, exponent) - exponent) < 1e-6, `${cutoff} ${exponent}`);
  }
  assert.ok(Math.abs(carried(Math.PI / 6, 500) - 128) < 1e-6); // OpenGL's most
  const state = Float32Array.from({ length: 28 }, () => 0);
  state.set([1, 2, 3, 1, 0, 0, 0], 14);
  state.set([0, 0, 5, 1, 0, 0, 0], 21);
  poseMujoco(made, state);
  assert.deepEqual(made.bodies[2].position.toArray(), [1, 2, 3]);
});
