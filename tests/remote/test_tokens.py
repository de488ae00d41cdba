"""Tokens: the key pairs they stand for, and where they come from."""

import os
import stat

import pytest

from gymview.remote import tokens
from gymview.remote.tokens import curve_keys


def test_a_token_stands_for_two_curve_key_pairs_that_hold_together_and_differ_from_any_other_tokens():
    import zmq

    keys = curve_keys("s3cret")
    assert zmq.curve_public(keys.hub_secret) == keys.hub_public and zmq.curve_public(keys.peer_secret) == keys.peer_public
    assert keys.hub_public != keys.peer_public
    others = curve_keys("s3cret ")
    assert {others.hub_public, others.peer_public}.isdisjoint({keys.hub_public, keys.peer_public})
    assert b"s3cret" not in keys.hub_public + keys.hub_secret + keys.peer_public + keys.peer_secret


def test_a_publisher_makes_a_token_once_in_a_file_only_its_user_reads_and_keeps_it_out_of_the_environment(
        monkeypatch, tmp_path):
    monkeypatch.delenv(tokens.TOKEN_VARIABLE, raising=False)
    monkeypatch.setenv("GYMVIEW_RUNTIME_DIR", str(tmp_path / "runtime"))
    token, made = tokens.publisher_token("127.0.0.1:5555")
    assert made and len(token) >= 20 and tokens.TOKEN_VARIABLE not in os.environ
    path = tokens.token_file("127.0.0.1:5555")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert tokens.publisher_token("127.0.0.1:5555") == (token, False)  # a worker, a restarted script
    assert tokens.publisher_token("127.0.0.1:5556")[0] != token  # another address, another token
    assert tokens.viewer_token(None, "127.0.0.1:5555") == token  # a notebook on this machine finds it
    assert sorted(p.name for p in path.parent.iterdir()) == sorted(["token-127.0.0.1-5555", "token-127.0.0.1-5556"])


def test_processes_that_publish_at_once_all_take_the_token_the_first_one_wrote(monkeypatch, tmp_path):
    monkeypatch.delenv(tokens.TOKEN_VARIABLE, raising=False)
    monkeypatch.setenv("GYMVIEW_RUNTIME_DIR", str(tmp_path))
    path = tokens.token_file("127.0.0.1:5555")
    first = tokens.write_token_file(path, "first")
    assert (first, tokens.write_token_file(path, "second")) == ("first", "first")
    assert tokens.publisher_token("127.0.0.1:5555") == ("first", False)


def test_a_token_file_others_may_read_is_refused_with_the_command_that_makes_it_private(monkeypatch, tmp_path):
    monkeypatch.delenv(tokens.TOKEN_VARIABLE, raising=False)
    monkeypatch.setenv("GYMVIEW_RUNTIME_DIR", str(tmp_path))
    path = tokens.token_file("127.0.0.1:5555")
    path.write_text("s3cret")
    path.chmod(0o644)
    with pytest.raises(PermissionError, match=r"others may read the token file .* \(mode 644\): make it private "
                                              r"\(chmod 600 .*token-127.0.0.1-5555\)"):
        tokens.publisher_token("127.0.0.1:5555")
    with pytest.raises(PermissionError, match="chmod 600"):
        tokens.viewer_token(None, "127.0.0.1:5555")
    path.chmod(0o600)
    assert tokens.viewer_token(None, "127.0.0.1:5555") == "s3cret"


def test_a_token_file_that_is_a_link_or_a_pipe_or_in_a_shared_folder_is_refused(monkeypatch, tmp_path):
    monkeypatch.delenv(tokens.TOKEN_VARIABLE, raising=False)
    monkeypatch.setenv("GYMVIEW_RUNTIME_DIR", str(tmp_path / "runtime"))
    path = tokens.token_file("127.0.0.1:5555")
    path.parent.mkdir(mode=0o700)
    (tmp_path / "elsewhere").write_text("planted")
    path.symlink_to(tmp_path / "elsewhere")
    with pytest.raises(PermissionError, match="is a symbolic link"):
        tokens.viewer_token(None, "127.0.0.1:5555")
    path.unlink()
    os.mkfifo(path)
    with pytest.raises(PermissionError, match="not a plain file"):  # never waits for a writer
        tokens.viewer_token(None, "127.0.0.1:5555")
    path.unlink()
    path.parent.chmod(0o777)
    with pytest.raises(PermissionError, match=r"only you may use \(chmod 700 "):
        tokens.publisher_token("127.0.0.1:5555")
    assert "s3cret" not in repr(curve_keys("s3cret")) and curve_keys("s3cret").hub_secret.decode() not in repr(
        curve_keys("s3cret"))


def test_a_notebook_needs_a_token(monkeypatch, tmp_path):
    monkeypatch.delenv(tokens.TOKEN_VARIABLE, raising=False)
    monkeypatch.setenv("GYMVIEW_RUNTIME_DIR", str(tmp_path))
    with pytest.raises(ValueError, match="pass token='...' .the run printed it.* reads it from .*token-127.0.0.1-5555"):
        tokens.viewer_token(None, "127.0.0.1:5555")
    with pytest.raises(TypeError, match="token must be a string"):
        tokens.viewer_token(1234, "127.0.0.1:5555")
    monkeypatch.setenv(tokens.TOKEN_VARIABLE, "from-env")
    assert tokens.viewer_token(None, "127.0.0.1:5555") == "from-env"
    assert tokens.viewer_token("given", "127.0.0.1:5555") == "given"
