"""``map``: a snapshot of the agent's map as PNG bytes (throttled on the vehicle)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from contract.payloads.base import Payload, Reader

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@dataclass(frozen=True)
class MapImage(Payload):
    MSG_TYPE: ClassVar[str] = "map"
    SCHEMA_VERSION: ClassVar[int] = 1

    png: bytes
    step: int | None = None
    kind: str = ""          # "semantic" (the agent's semantic map); "" when unsaid

    def body(self) -> dict[str, Any]:
        return {"png": bytes(self.png), "step": self.step, "kind": self.kind}

    @classmethod
    def _from(cls, r: Reader) -> "MapImage":
        png = r.blob("png")
        if not png.startswith(PNG_MAGIC):
            raise r.fail("png", "is not a PNG image")
        return cls(png=png, step=r.opt_integer("step", lo=0), kind=r.text("kind", ""))
