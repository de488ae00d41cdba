"""A renderer for gymnasium's Blackjack: its pixel art pasted on the felt, as its ``draw_table`` pastes it.

Blackjack's picture is the felt with the dealer's label and face-up card's value, the face-up card and the hidden
one, the player's label and sum, and a label while the player holds a usable ace: pictures loaded from gymnasium's
own files, each pasted where ``draw_table`` pastes it; a state is which picture goes where
(:class:`~gymview.renderers.pasted.PastedRenderer`). Checked against ``draw_table`` when made: a gymnasium that lays
the table out otherwise goes as pictures.
"""

from __future__ import annotations

import pathlib
from typing import Any

import gymnasium as gym
import numpy as np

from gymview.renderers.base import NotDrawable
from gymview.renderers.pasted import PastedRenderer, picture, rgba

__all__ = ["BlackjackRenderer"]

OTHERWISE = "this gymnasium draws Blackjack otherwise than gymnasium 1.4, whose table the page lays out"
# hands the layout is checked with when made: (player's sum, dealer's value, usable ace, dealer's card)
CHECKED_HANDS = ((21, 1, True, "AS"), (4, 10, False, "KH"), (13, 7, False, "7D"))


class BlackjackRenderer(PastedRenderer):
    """Blackjack-v1: each picture the table may show as (picture, x, y) in pixels, NaN where it shows none (a one
    digit number's second digit, the usable ace's label); pictures are gymnasium's files, in the order of their
    names."""

    slots = ("dealer_label", "dealer_digit0", "dealer_digit1", "dealer_card", "hidden_card", "player_label",
             "player_digit0", "player_digit1", "usable_ace")  # fmt: skip

    def __init__(self, env: gym.Env, env_id: str) -> None:
        """Raises :class:`~gymview.renderers.base.NotDrawable` where this gymnasium's Blackjack draws otherwise."""
        import pygame
        from gymnasium.envs.toy_text import blackjack

        try:
            self._layout = {name: getattr(blackjack, name) for name in
                            ("ART_PIXEL", "SCREEN_SIZE", "FELT_COLOR", "DEALER_LABEL_POS", "DEALER_CARD_POS",
                             "HIDDEN_CARD_POS", "PLAYER_LABEL_POS", "PLAYER_SUM_TOP", "USABLE_ACE_TOP",
                             "LABEL_DIGIT_GAP", "SMALL_DIGIT_GAP", "BIG_DIGIT_GAP")}  # fmt: skip
            draw_table = blackjack.draw_table
            files = sorted((pathlib.Path(blackjack.__file__).parent / "img" / "blackjack").glob("*.png"))
            loaded = {file.stem: pygame.image.load(str(file)) for file in files}
            self._index = {name: n for n, name in enumerate(loaded)}
            self._widths = {name: surface.get_width() for name, surface in loaded.items()}
            table = pygame.Surface(self._layout["SCREEN_SIZE"])
            table.fill(self._layout["FELT_COLOR"])
            super().__init__(env_id, picture(table), [rgba(surface) for surface in loaded.values()])
            for hand in CHECKED_HANDS:
                draw_table(table, *hand)
                if not np.array_equal(self._drawn(self._state(*hand)), picture(table)):
                    raise NotDrawable(OTHERWISE)
        except (AttributeError, KeyError, TypeError, ValueError, pygame.error) as error:
            raise NotDrawable(OTHERWISE) from error

    def state_of(self, env: gym.Env) -> np.ndarray:
        unwrapped: Any = env.unwrapped
        if not hasattr(unwrapped, "player"):
            raise ValueError("the env has no state yet: call env.reset() before renderer.state_of(env)")
        player_sum, dealer_value, usable_ace = unwrapped._get_obs()
        card = unwrapped.dealer_top_card_value_str + unwrapped.dealer_top_card_suit
        return self._state(int(player_sum), int(dealer_value), bool(usable_ace), card)

    def _state(self, player_sum: int, dealer_value: int, usable_ace: bool, card: str) -> np.ndarray:
        """What draw_table pastes where, for this hand."""
        layout, widths = self._layout, self._widths
        pasted: list[tuple[str, int, int, int]] = []

        def paste(slot: str, name: str, x: int, y: int) -> None:
            pasted.append((slot, self._index[name], x, y))

        def digits(slot: str, number: int, size: str, gap: int, x: int, y: int) -> None:
            for n, digit in enumerate(str(number)):
                paste(f"{slot}{n}", f"digit_{size}_{digit}", x, y)
                x += widths[f"digit_{size}_{digit}"] + gap

        def centred_x(width: int) -> int:
            return (layout["SCREEN_SIZE"][0] - width) // 2 // layout["ART_PIXEL"] * layout["ART_PIXEL"]

        label_x, label_y = layout["DEALER_LABEL_POS"]
        paste("dealer_label", "label_dealer", label_x, label_y)
        at = label_x + widths["label_dealer"] + layout["LABEL_DIGIT_GAP"]
        digits("dealer_digit", dealer_value, "small", layout["SMALL_DIGIT_GAP"], at, label_y)
        paste("dealer_card", f"card_{card}", *layout["DEALER_CARD_POS"])
        paste("hidden_card", "card_back", *layout["HIDDEN_CARD_POS"])
        paste("player_label", "label_player", *layout["PLAYER_LABEL_POS"])
        count, gap = len(str(player_sum)), layout["BIG_DIGIT_GAP"]
        width = count * widths["digit_big_0"] + (count - 1) * gap
        digits("player_digit", player_sum, "big", gap, centred_x(width), layout["PLAYER_SUM_TOP"])
        if usable_ace:
            paste("usable_ace", "label_usable_ace", centred_x(widths["label_usable_ace"]), layout["USABLE_ACE_TOP"])
        return self._pasted(pasted)
