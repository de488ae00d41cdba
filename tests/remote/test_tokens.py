"""Tokens: never sent, proven by each side; where they come from."""

import pytest

from gymview.remote import tokens
from gymview.remote.tokens import HUB, PEER, proof, proves


def test_a_proof_holds_only_for_its_token_role_and_nonces():
    good = proof("s3cret", PEER, "hub-nonce", "peer-nonce")
    assert proves("s3cret", good, PEER, "hub-nonce", "peer-nonce")
    assert not proves("other", good, PEER, "hub-nonce", "peer-nonce")
    assert not proves("s3cret", good, HUB, "hub-nonce", "peer-nonce")  # a peer's proof is no hub's
    assert not proves("s3cret", good, PEER, "new-hub", "peer-nonce")   # nor one for another hub
    assert "s3cret" not in good


@pytest.mark.parametrize("claimed", [None, 7, ["x"], "", "é" * 64, "0" * 64])
def test_anything_a_peer_sends_is_compared_without_error(claimed):
    assert not proves("s3cret", claimed, PEER, "a", "b")


def test_a_publisher_makes_a_token_its_children_inherit(monkeypatch):
    monkeypatch.delenv(tokens.TOKEN_VARIABLE, raising=False)
    token, made = tokens.publisher_token()
    assert made and len(token) >= 20
    assert tokens.publisher_token() == (token, False)  # from GYMVIEW_TOKEN now


def test_a_notebook_needs_a_token(monkeypatch):
    monkeypatch.delenv(tokens.TOKEN_VARIABLE, raising=False)
    with pytest.raises(ValueError, match="pass token='...' .the run printed it"):
        tokens.viewer_token(None, "127.0.0.1:5555")
    with pytest.raises(TypeError, match="token must be a string"):
        tokens.viewer_token(1234, "127.0.0.1:5555")
    monkeypatch.setenv(tokens.TOKEN_VARIABLE, "from-env")
    assert tokens.viewer_token(None, "127.0.0.1:5555") == "from-env"
    assert tokens.viewer_token("given", "127.0.0.1:5555") == "given"
