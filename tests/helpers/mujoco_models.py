"""MuJoCo models for the tests of what the page draws: gymnasium's Ant changed as users change it (its xml_file),
each written to a folder and passed to ``gym.make("Ant-v5", xml_file=...)``."""

from __future__ import annotations

import importlib.util
import pathlib
import re

import numpy as np


def ant_xml() -> str:
    """Gymnasium's own ant.xml."""
    package = pathlib.Path(importlib.util.find_spec("gymnasium.envs.mujoco").origin).parent
    return (package / "assets" / "ant.xml").read_text()


def ant_on_rough_ground(folder: pathlib.Path) -> pathlib.Path:
    """The Ant with its floor a heightfield of bumps half a metre high, a few metres apart, under its checkered
    material."""
    rows, columns = np.mgrid[0:64, 0:64] / 63.0
    bumps = (np.sin(40 * rows) * np.cos(30 * columns) + 1) / 2
    terrain = (f'<hfield name="terrain" nrow="64" ncol="64" size="8 8 .5 .1" '
               f'elevation="{" ".join(f"{h:.3f}" for h in bumps.ravel())}"/>')  # fmt: skip
    xml = ant_xml().replace("<asset>", f"<asset>{terrain}", 1)
    xml, floors = re.subn(r'<geom ([^>]*)name="floor" pos="0 0 0"([^>]*)type="plane"/>',
                          r'<geom \1name="floor" pos="0 0 -.5"\2type="hfield" hfield="terrain"/>', xml)  # fmt: skip
    if floors != 1:
        raise AssertionError("gymnasium's ant.xml has changed its floor")
    return _written(folder / "ant_on_rough_ground.xml", xml)


def ant_with_tendons(folder: pathlib.Path) -> pathlib.Path:
    """The Ant with a red strap from its front left foot over its body (wrapped round its sphere, on the side of a
    site above it) to its front right foot, and a thin blue string from its body to its back foot; the sites
    hidden (group 3)."""
    xml = ant_xml()
    sites = {
        "left_ankle_geom": '<site name="front_left_tip" pos="0.4 0.4 0" group="3"/>',
        "right_ankle_geom": '<site name="front_right_tip" pos="-0.4 0.4 0" group="3"/>',
        "fourth_ankle_geom": '<site name="back_tip" pos="0.4 -0.4 0" group="3"/>',
        "torso_geom": '<site name="above" pos="0 0 0.5" group="3"/><site name="side" pos="0.3 0 0" group="3"/>',
    }
    for geom, site in sites.items():
        xml, found = re.subn(rf'(<geom [^>]*name="{geom}"[^>]*/>)', rf"\1{site}", xml)
        if found != 1:
            raise AssertionError(f"gymnasium's ant.xml has no geom {geom}")
    tendons = (
        '<tendon><spatial name="strap" width=".03" rgba=".9 .2 .2 1"><site site="front_left_tip"/>'
        '<geom geom="torso_geom" sidesite="above"/><site site="front_right_tip"/></spatial>'
        '<spatial name="string" width=".01" rgba=".2 .3 .9 1"><site site="side"/><site site="back_tip"/></spatial>'
        "</tendon>"
    )
    return _written(folder / "ant_with_tendons.xml", xml.replace("<actuator>", f"{tendons}<actuator>", 1))


def ant_with_a_mesh_body(folder: pathlib.Path) -> pathlib.Path:
    """The Ant with its round body a mesh: a dodecahedron of the sphere's size (MuJoCo makes its faces, the convex
    hull of its 20 corners), under the Ant's own material."""
    golden = (1 + 5**0.5) / 2
    corners = [(x, y, z) for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)]
    for a, b in ((1 / golden, golden), (-1 / golden, golden), (1 / golden, -golden), (-1 / golden, -golden)):
        corners += [(0, a, b), (a, b, 0), (b, 0, a)]
    vertices = " ".join(f"{0.25 * c / 3**0.5:.5f}" for corner in corners for c in corner)
    xml = ant_xml().replace("<asset>", f'<asset><mesh name="body" vertex="{vertices}"/>', 1)
    xml, found = re.subn(r'<geom name="torso_geom" pos="0 0 0" size="0.25" type="sphere"/>',
                         '<geom name="torso_geom" pos="0 0 0" type="mesh" mesh="body"/>', xml)  # fmt: skip
    if found != 1:
        raise AssertionError("gymnasium's ant.xml has changed its body")
    return _written(folder / "ant_with_a_mesh_body.xml", xml)


def ant_under_a_following_light(folder: pathlib.Path) -> pathlib.Path:
    """The Ant under a warm spotlight that follows its centre of mass from 2 m above, never turning, as dm_control's
    suite lights its walkers (``mode="trackcom"``), casting its shadow."""
    light = '<light name="follower" mode="trackcom" pos="0 0 2" dir="0 0 -1" diffuse=".6 .4 .2" cutoff="25" castshadow="true"/>'
    xml, found = re.subn(r'(<geom [^>]*name="torso_geom"[^>]*/>)', rf"\1{light}", ant_xml())
    if found != 1:
        raise AssertionError("gymnasium's ant.xml has no geom torso_geom")
    return _written(folder / "ant_under_a_following_light.xml", xml)


def ant_beside_a_crate(folder: pathlib.Path) -> pathlib.Path:
    """The Ant beside a crate it passes through (no contacts), the crate's six faces one orange picture from a file
    (a cube texture of one square image: MuJoCo puts it on every face)."""
    from PIL import Image

    rows, columns = np.mgrid[0:32, 0:32]
    planks = np.where((rows // 8 + columns // 16) % 2, 1.0, 0.8)[..., None] * np.array([230, 130, 30])
    Image.fromarray(planks.astype(np.uint8)).save(folder / "crate.png")
    asset = '<texture name="crate" type="cube" file="crate.png"/><material name="crate" texture="crate"/>'
    crate = ('<geom name="crate" type="box" pos="0 1.2 .4" size=".4 .4 .4" material="crate" '
             'contype="0" conaffinity="0"/>')  # fmt: skip
    return _ant_beside(folder / "ant_beside_a_crate.xml", asset, crate)


def ant_beside_a_painted_box(folder: pathlib.Path) -> pathlib.Path:
    """The Ant beside a box mesh from an OBJ file whose faces carry their own texture coordinates (as Menagerie's
    robots' meshes do), each face showing a picture of four coloured quarters; no contacts."""
    from PIL import Image

    quarters = np.zeros((64, 64, 3), np.uint8)
    quarters[:32, :32], quarters[:32, 32:] = (220, 40, 40), (40, 200, 60)
    quarters[32:, :32], quarters[32:, 32:] = (40, 80, 220), (230, 210, 40)
    Image.fromarray(quarters).save(folder / "quarters.png")
    corners = [(x, y, z) for x in (-0.4, 0.4) for y in (-0.4, 0.4) for z in (-0.4, 0.4)]
    faces = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]  # outward, each
    lines = [f"v {x} {y} {z}" for x, y, z in corners] + ["vt 0 0", "vt 1 0", "vt 1 1", "vt 0 1"]
    lines += [f"f {a + 1}/1 {b + 1}/2 {c + 1}/3 {d + 1}/4" for a, b, c, d in faces]
    (folder / "painted_box.obj").write_text("\n".join(lines) + "\n")
    asset = ('<mesh name="painted" file="painted_box.obj"/><texture name="quarters" type="2d" file="quarters.png"/>'
             '<material name="quarters" texture="quarters"/>')  # fmt: skip
    box = ('<geom name="painted" type="mesh" mesh="painted" material="quarters" pos="0 1.2 .4" '
           'contype="0" conaffinity="0"/>')  # fmt: skip
    return _ant_beside(folder / "ant_beside_a_painted_box.xml", asset, box)


def _ant_beside(path: pathlib.Path, asset: str, geom: str) -> pathlib.Path:
    """gymnasium's ant.xml with ``asset`` among its assets and ``geom`` in the world after its floor, written to
    ``path``."""
    xml = ant_xml().replace("<asset>", f"<asset>{asset}", 1)
    xml, found = re.subn(r'(<geom [^>]*name="floor"[^>]*/>)', rf"\1{geom}", xml)
    if found != 1:
        raise AssertionError("gymnasium's ant.xml has changed its floor")
    return _written(path, xml)


def _written(path: pathlib.Path, xml: str) -> pathlib.Path:
    path.write_text(xml)
    return path
