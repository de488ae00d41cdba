// How MuJoCo's textures, materials, lights and sky look in three.js (js/scene3d.js builds scenes with these).
//
// MuJoCo draws without colour management (its colours are the pixels' values) and with OpenGL's
// fixed-function lights; three.js's Phong lights divide the diffuse term by pi, hence light colours times pi.
import * as THREE from "three";

const SKY_SEGMENTS = 16;

/** A MuJoCo texture (a PNG data URL, as gymview/renderers/mujoco_scene.py sends it) as a three.js texture. */
export async function decodeTexture({ type, width, height, url }) {
  const blob = await (await fetch(url)).blob();
  const options = { colorSpaceConversion: "none", premultiplyAlpha: "none" };
  const image = await createImageBitmap(blob, options);
  if (type === "2d") {
    const texture = new THREE.Texture(image);
    texture.wrapS = texture.wrapT = THREE.RepeatWrapping;
    return finish(texture);
  }
  // six square faces one below the other (+x, -x, +y, -y, +z, -z), or one square for all six, as MuJoCo uploads them
  const faces = await Promise.all([0, 1, 2, 3, 4, 5].map((i) => createImageBitmap(image, 0, height === width ? 0 : i * width, width, width, options)));
  return finish(new THREE.CubeTexture(faces));
}

function finish(texture) {
  texture.flipY = false; // the first row is at t = 0, as OpenGL (and MuJoCo) upload it
  texture.colorSpace = THREE.NoColorSpace;
  texture.needsUpdate = true;
  return texture;
}

/** How much of a light's colour shows as specular highlight: MuJoCo's specular over its diffuse, with
 * three.js's Blinn-Phong normalisation, (shininess / 2 + 1) / 4, taken out. */
function specularScale(scene, shininess) {
  const lights = scene.lights;
  const sum = (key) => lights.reduce((total, light) => total + light[key][0], 0);
  const ratio = sum("diffuse") > 0 ? sum("specular") / sum("diffuse") : 0;
  return (ratio * 4) / (shininess / 2 + 1);
}

/** The Phong material nearest to MuJoCo's fixed-function one for `geom`; `matte`: Lambert, no highlights. */
export function materialOf(geom, scene, textures, matte = false) {
  const [r, g, b, alpha] = geom.rgba;
  const common = {
    color: new THREE.Color(r, g, b),
    emissive: new THREE.Color(r * geom.emission, g * geom.emission, b * geom.emission),
    transparent: alpha < 0.995,
    opacity: alpha,
  };
  const shininess = geom.shininess * 128;
  const specular = geom.specular * specularScale(scene, shininess);
  const material = matte
    ? new THREE.MeshLambertMaterial(common)
    : new THREE.MeshPhongMaterial({ ...common, specular: new THREE.Color(specular, specular, specular), shininess });
  const texture = geom.texture >= 0 ? textures?.[geom.texture] : null;
  if (texture?.isCubeTexture) cubeTextured(material, texture, geom);
  else if (texture) material.map = texture;
  return material;
}

/** MuJoCo maps a cube texture on a geom by the direction of each point from the geom's centre (object
 * coordinates, in metres when the material's texture is uniform, else in the geom's unit shape). */
function cubeTextured(material, texture, geom) {
  const scale = geom.texuniform ? [1, 1, 1] : geom.size.map((s) => 1 / (s || 1));
  material.onBeforeCompile = (shader) => {
    shader.uniforms.cubeTexture = { value: texture };
    shader.uniforms.cubeScale = { value: new THREE.Vector3(...scale) };
    shader.vertexShader = shader.vertexShader
      .replace("#include <common>", "#include <common>\nuniform vec3 cubeScale;\nvarying vec3 vCubeDirection;")
      .replace("#include <begin_vertex>", "#include <begin_vertex>\nvCubeDirection = position * cubeScale;");
    shader.fragmentShader = shader.fragmentShader
      .replace("#include <common>", "#include <common>\nuniform samplerCube cubeTexture;\nvarying vec3 vCubeDirection;")
      .replace("#include <map_fragment>", "diffuseColor.rgb *= textureCube(cubeTexture, vCubeDirection).rgb;");
  };
  material.customProgramCacheKey = () => "gymview-cube-texture";
}

/** The sky: MuJoCo's skybox texture on a sphere around the eye, looked up at (x, z, -y) (its z is up). */
export function skyOf(scene, textures) {
  const texture = textures?.find((t) => t?.isCubeTexture && scene.textures[textures.indexOf(t)].type === "skybox");
  if (!scene.skybox || !texture) return null;
  const material = new THREE.ShaderMaterial({
    uniforms: { sky: { value: texture } },
    vertexShader: "varying vec3 vDirection; void main() { vDirection = position; gl_Position = projectionMatrix * modelViewMatrix * vec4(position, 1.0); }",
    fragmentShader: "uniform samplerCube sky; varying vec3 vDirection; void main() { gl_FragColor = textureCube(sky, vec3(vDirection.x, vDirection.z, -vDirection.y)); }",
    side: THREE.BackSide,
    depthWrite: false,
  });
  const sky = new THREE.Mesh(new THREE.SphereGeometry(0.7 * scene.camera.zfar, SKY_SEGMENTS, SKY_SEGMENTS / 2), material);
  sky.renderOrder = -1;
  return sky;
}

export const colour = ([r, g, b], scale = Math.PI) => new THREE.Color(r * scale, g * scale, b * scale);

/** A light of the scene, on `parent` (the camera for the headlight, a body, or the world). */
export function lightOf(light, scene, parent, shadows) {
  const made = light.type === "spot" ? spotLight(light) : new THREE.DirectionalLight(colour(light.diffuse));
  parent.add(made, made.target);
  if (light.headlight) {
    made.position.set(0, 0, 0); // three.js puts a directional light at (0, 1, 0) unless told
    made.target.position.set(0, 0, -1);
    return made;
  }
  made.position.set(...light.pos);
  made.target.position.set(light.pos[0] + light.dir[0], light.pos[1] + light.dir[1], light.pos[2] + light.dir[2]);
  if (light.castshadow && shadows) shadowOf(made, scene);
  return made;
}

function spotLight(light) {
  const [constant, linear, quadratic] = light.attenuation;
  const decay = quadratic > 0 ? 2 : linear > 0 ? 1 : 0;
  const cutoff = Math.min((light.cutoff * Math.PI) / 180, Math.PI / 2);
  const made = new THREE.SpotLight(colour(light.diffuse, Math.PI / Math.max(constant, 1e-6)), 1, 0, cutoff, 0, decay);
  made.penumbra = spotPenumbra(cutoff, light.exponent);
  return made;
}

/** MuJoCo's spot lights fade as OpenGL's do: cos(angle)^exponent, to nothing past the cutoff. three.js's fade
 * (smoothstep over its penumbra) gives way to that, the exponent carried in the penumbra's cosine (spotPenumbra). */
const MOST_EXPONENT = 128; // OpenGL's
THREE.ShaderChunk.lights_pars_begin = THREE.ShaderChunk.lights_pars_begin.replace(
  "return smoothstep( coneCosine, penumbraCosine, angleCosine );",
  `float exponent = ${MOST_EXPONENT}.0 * ( penumbraCosine - coneCosine ) / max( 1.0 - coneCosine, 1e-6 );
  return angleCosine > coneCosine ? pow( max( angleCosine, 0.0 ), exponent ) : 0.0;`,
);

/** The penumbra whose cosine carries a spot light's exponent (0-128) to the shader: three.js hands the shader
 * cos(cutoff * (1 - penumbra)), between the cutoff's cosine (exponent 0) and 1 (exponent 128). */
export function spotPenumbra(cutoff, exponent) {
  const share = Math.min(Math.max(exponent, 0), MOST_EXPONENT) / MOST_EXPONENT;
  const carried = Math.cos(cutoff) + share * (1 - Math.cos(cutoff));
  return cutoff > 0 ? 1 - Math.acos(Math.min(carried, 1)) / cutoff : 0;
}

function shadowOf(light, scene) {
  light.castShadow = true;
  const camera = light.shadow.camera;
  if (camera.isOrthographicCamera) {
    camera.left = camera.bottom = -scene.shadow_clip;
    camera.right = camera.top = scene.shadow_clip;
  }
  camera.near = scene.camera.znear;
  camera.far = scene.camera.zfar;
  light.shadow.mapSize.set(scene.shadow_size, scene.shadow_size);
  light.shadow.bias = -0.0005;
}

/** Matte, lit by directional lights fixed in the world or to the camera, a plane in the world has one colour
 * (n.l is the same all over it): drawn unlit in that colour (lightFlats), a sixth of a frame's cost less. */
export function drawnFlat(geom, scene, textures, software) {
  if (!software || geom.type !== "plane" || geom.body >= 0 || geom.emission || textures?.[geom.texture]?.isCubeTexture) return false;
  return scene.lights.every((light) => light.type === "directional" && (light.headlight || light.body < 0));
}

export function unlit(material) {
  const { map, transparent, opacity } = material;
  material.dispose();
  return new THREE.MeshBasicMaterial({ map, transparent, opacity });
}

const forward = new THREE.Vector3();

/** The colour of each unlit plane under the scene's lights, seen from the camera where it is now (its
 * headlight turns with it): Lambert's, ambient plus each light's diffuse times n.l. */
export function lightFlats(made) {
  made.camera.getWorldDirection(forward);
  for (const { material, base, normal } of made.flats) {
    const sum = [0, 0, 0];
    for (const light of made.lights) {
      const [x, y, z] = light.headlight ? forward.toArray() : light.dir;
      const facing = Math.max(0, -(normal.x * x + normal.y * y + normal.z * z) / Math.hypot(x, y, z));
      for (let i = 0; i < 3; i += 1) sum[i] += light.ambient[i] + light.diffuse[i] * facing;
    }
    material.color.setRGB(base.r * sum[0], base.g * sum[1], base.b * sum[2]);
  }
}
