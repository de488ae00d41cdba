// A MuJoCo floor's reflection, without WebGL: which geom mirrors, the mirrored pass a renderer is asked for,
// and the near plane laid on the mirror. `node --test js/tests/`.
import assert from "node:assert/strict";
import { test } from "node:test";

import * as THREE from "three";

import { buildMujoco, poseMujoco } from "../scene3d.js";
import { drawMirrored, mirrorGeom, mirrorIn } from "../scene3d_mirror.js";

const look = { rgba: [0.5, 0.5, 0.5, 1], emission: 0, specular: 0, shininess: 0, texture: -1, texrepeat: [1, 1],
  texuniform: false, mesh: -1, hfield: -1, quat: [1, 0, 0, 0] }; // fmt: skip

/** A floor at z = 0 that mirrors at 0.3 under a box on body 0. */
function floorScene(floor = {}) {
  return {
    kind: "mujoco", width: 64, height: 48, bodies: 1, meshes: [], hfields: [], textures: [],
    geoms: [
      { ...look, type: "plane", size: [5, 5, 0.1], body: -1, pos: [0, 0, 0], reflectance: 0.3, ...floor },
      { ...look, type: "box", size: [0.1, 0.1, 0.1], body: 0, pos: [0, 0, 0], reflectance: 0 },
    ],
    lights: [{ type: "directional", headlight: true, ambient: [0.1, 0.1, 0.1], diffuse: [0.4, 0.4, 0.4],
      specular: [0, 0, 0], castshadow: false }], // fmt: skip
    camera: { fovy: 45, znear: 0.01, zfar: 50 },
    shadows: false, shadow_clip: 1, shadow_size: 256, skybox: false,
  };
}

const geom = (type, reflectance, alpha = 1) => ({ type, reflectance, rgba: [1, 1, 1, alpha] });

test("MuJoCo mirrors in the first opaque plane or box with a reflectance, and in no other", () => {
  assert.equal(mirrorGeom([geom("sphere", 0.5), geom("plane", 0), geom("box", 0.2), geom("plane", 0.5)]), 2);
  assert.equal(mirrorGeom([geom("plane", 0.5, 0.5), geom("plane", 0.1)]), 1); // a see-through one does not
  assert.equal(mirrorGeom([geom("capsule", 1), geom("plane", 0)]), -1);
});

test("a floor with a reflectance mirrors; none where the scene turns reflections off", () => {
  const made = buildMujoco(floorScene(), null, true);
  assert.equal(made.mirror.mesh, made.root.children.find((child) => child.isMesh && child.geometry.type === "PlaneGeometry"));
  assert.equal(made.mirror.reflectance, 0.3);
  assert.equal(buildMujoco({ ...floorScene(), reflection: false }, null, true).mirror, null);
  assert.equal(buildMujoco(floorScene({ reflectance: 0 }), null, true).mirror, null);
});

/** A renderer that notes what each render sees: where the box is, whether the floor shows, the target. */
function noting() {
  const seen = [];
  const drawing = {
    shadowMap: { enabled: true, autoUpdate: true },
    target: null,
    setRenderTarget(target) {
      this.target = target;
    },
    setClearColor() {},
    render(root, eye) {
      root.updateMatrixWorld();
      const box = root.children.find((child) => child.isGroup);
      const floor = root.children.find((child) => child.isMesh);
      seen.push({ boxAt: new THREE.Vector3().setFromMatrixPosition(box.children[0].matrixWorld), floorShown: floor.visible,
        target: this.target, shadowsDrawn: this.shadowMap.autoUpdate, shadowsLookedUp: box.children[0].receiveShadow, eye }); // fmt: skip
    },
  };
  return { seen, drawing };
}

/** Pose `made` with its box at height `z` and the camera at (0, -3, 2) looking at the origin. */
function posed(made, z) {
  const look = new THREE.PerspectiveCamera(); // a camera looks along its -z: lookAt turns it so
  look.position.set(0, -3, 2);
  look.lookAt(0, 0, 0);
  const q = look.quaternion;
  poseMujoco(made, Float32Array.from([0, 0, z, 1, 0, 0, 0, 0, -3, 2, q.w, q.x, q.y, q.z]));
  made.camera.aspect = 64 / 48;
  made.camera.updateProjectionMatrix();
}

test("the mirrored pass draws the scene upside down in the floor, without the floor or shadows, into the mirror's picture", () => {
  const sun = { type: "directional", headlight: false, body: -1, pos: [0, 0, 3], dir: [0, 0, -1], ambient: [0, 0, 0],
    diffuse: [1, 1, 1], specular: [0, 0, 0], attenuation: [1, 0, 0], cutoff: 45, exponent: 1, castshadow: true }; // fmt: skip
  const scene = floorScene();
  const made = buildMujoco({ ...scene, shadows: true, lights: [...scene.lights, sun] }, null, false); // shadows in hardware WebGL
  posed(made, 0.5);
  const { seen, drawing } = noting();
  drawMirrored(made, drawing, 64, 48);
  assert.equal(seen.length, 1);
  const [pass] = seen;
  assert.deepEqual(pass.boxAt.toArray().map((x) => Math.round(x * 1e6) / 1e6 + 0), [0, 0, -0.5]);
  assert.equal(pass.floorShown, false);
  assert.equal(pass.target, made.mirror.target);
  assert.equal(pass.shadowsDrawn, false); // the shadow map is of the scene unmirrored: neither drawn again
  assert.equal(pass.shadowsLookedUp, false); // nor looked up
  assert.equal(made.mirror.uniforms.mirrorStrength.value, 0.3);
  // and the scene is as it was: the box above the floor, the floor shown, the picture drawn on the canvas next
  made.root.updateMatrixWorld();
  assert.equal(new THREE.Vector3().setFromMatrixPosition(made.bodies[0].children[0].matrixWorld).z, 0.5);
  assert.equal(made.mirror.mesh.visible, true);
  assert.equal(drawing.target, null);
  assert.equal(drawing.shadowMap.autoUpdate, true);
  assert.equal(made.bodies[0].children[0].receiveShadow, true);
  assert.deepEqual([made.mirror.target.width, made.mirror.target.height], [32, 24]); // at half the size: a faint picture
});

test("the mirrored pass keeps what is below the floor and leaves out what is between the camera and it", () => {
  const made = buildMujoco(floorScene(), null, true);
  posed(made, 0.5);
  const { seen, drawing } = noting();
  drawMirrored(made, drawing, 64, 48);
  const { eye } = seen[0];
  const clipped = (x, y, z) => {
    const at = new THREE.Vector4(x, y, z, 1).applyMatrix4(eye.matrixWorldInverse).applyMatrix4(eye.projectionMatrix);
    assert.ok(at.w > 0, "in front of the camera");
    return Math.abs(at.z) > at.w;
  };
  assert.equal(clipped(0, 0, -0.5), false, "a mirrored body below the floor is drawn");
  assert.equal(clipped(0.2, 0.3, -0.01), false, "just below the floor too");
  assert.equal(clipped(0, 0, 0.05), true, "what is above the floor (the mirror of something below it) is clipped");
  assert.equal(clipped(0, 0.5, 0.3), true);
});

test("a frame told to go without the reflection gets no mirrored pass (a grid's cell in software WebGL)", () => {
  const made = buildMujoco(floorScene(), null, true);
  posed(made, 0.5);
  const { seen, drawing } = noting();
  drawMirrored(made, drawing, 64, 48);
  assert.equal(made.mirror.uniforms.mirrorStrength.value, 0.3);
  drawMirrored(made, drawing, 64, 48, false);
  assert.equal(seen.length, 1); // the first call's pass only
  assert.equal(made.mirror.uniforms.mirrorStrength.value, 0); // and the floor adds none of a stale picture
});

test("a camera below the floor sees no reflection in it, as in MuJoCo", () => {
  const made = buildMujoco(floorScene(), null, true);
  posed(made, 0.5);
  made.camera.position.set(0, -3, -2);
  const { seen, drawing } = noting();
  drawMirrored(made, drawing, 64, 48);
  assert.equal(seen.length, 0);
  assert.equal(made.mirror.uniforms.mirrorStrength.value, 0);
});

test("a box mirrors in its top face, as MuJoCo's renderer does", () => {
  const made = buildMujoco(floorScene({ type: "box", size: [5, 5, 0.2], pos: [0, 0, -0.2] }), null, true);
  assert.equal(made.mirror.offset, 0.2);
  posed(made, 0.5);
  const { seen, drawing } = noting();
  drawMirrored(made, drawing, 64, 48);
  assert.ok(Math.abs(seen[0].boxAt.z + 0.5) < 1e-6, "mirrored in the top face at z = 0, not in the box's middle");
});

test("a mirrored pass that fails leaves the scene as it was", () => {
  const made = buildMujoco(floorScene(), null, true);
  posed(made, 0.5);
  const { drawing } = noting();
  drawing.render = () => {
    throw new Error("context lost");
  };
  assert.throws(() => drawMirrored(made, drawing, 64, 48), /context lost/);
  made.root.updateMatrixWorld();
  assert.equal(new THREE.Vector3().setFromMatrixPosition(made.bodies[0].children[0].matrixWorld).z, 0.5);
  assert.equal(made.root.matrixAutoUpdate, true);
  assert.equal(made.mirror.mesh.visible, true);
  assert.equal(drawing.target, null);
  assert.equal(drawing.shadowMap.autoUpdate, true);
});

test("a camera looking away from the floor, or level with it, gets no mirrored pass", () => {
  const made = buildMujoco(floorScene(), null, true);
  posed(made, 0.5);
  made.camera.lookAt(0, -6, 4); // up and away: the floor is out of view
  const { seen, drawing } = noting();
  drawMirrored(made, drawing, 64, 48);
  made.camera.position.set(0, -3, 0.001);
  made.camera.lookAt(0, 0, 0.001);
  drawMirrored(made, drawing, 64, 48);
  assert.equal(seen.length, 0);
  assert.equal(made.mirror.uniforms.mirrorStrength.value, 0);
});

test("the floor's shaders add the mirrored picture, in each kind of material the page draws with", () => {
  for (const [name, material] of [["basic", new THREE.MeshBasicMaterial()], ["lambert", new THREE.MeshLambertMaterial()], ["phong", new THREE.MeshPhongMaterial()]]) {
    const floor = new THREE.Mesh(new THREE.PlaneGeometry(), material);
    assert.equal(mirrorIn(floorScene(), [floor, new THREE.Mesh()]).mesh, floor);
    const shader = { uniforms: {}, vertexShader: THREE.ShaderLib[name].vertexShader, fragmentShader: THREE.ShaderLib[name].fragmentShader };
    material.onBeforeCompile(shader);
    assert.match(shader.vertexShader, /vMirrorFace = step\(0\.5, normal\.z\);/, name);
    assert.match(shader.fragmentShader, /gl_FragColor\.rgb \+= mirrorStrength \* vMirrorFace \* texture2D\(mirrorMap/, name);
    assert.ok("mirrorMap" in shader.uniforms, name);
  }
});
