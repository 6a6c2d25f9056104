"""reel's decoders for fluster, the decoder conformance framework
(PyPI fluster-conformance), and fluster's command line with them.

    python3 reel_fluster.py list
    python3 reel_fluster.py run -ts JVT-AVC_V1 -d reel-v4l2-H.264

Registers, for H.264, H.265, VP8, VP9, AV1 and MPEG-2 video:
- reel-v4l2-<codec>: reel through the V4L2 stateless decoder only
  (--hwdec v4l2: no software fallback, so a driver's failure is a failure);
- reel-sw-<codec>: reel through FFmpeg's software decoder (--hwdec no).
Each decodes a vector with `reel --output raw`: every picture, planes packed
in the stream's own layout, which is what fluster's md5 results are of.
The reel binary is $REEL, else `reel` on PATH; $REEL_DEVICE names a V4L2
decoder (--device) when the machine has several.
"""

import os
import sys
from typing import Any, Dict, Optional

from fluster.codec import Codec, OutputFormat
from fluster.decoder import Decoder, register_decoder
from fluster.main import fluster_main
from fluster.utils import file_checksum, run_command

CODECS = [Codec.H264, Codec.H265, Codec.VP8, Codec.VP9, Codec.AV1, Codec.MPEG2_VIDEO]


class ReelDecoder(Decoder):
    """reel decoding to raw video through one path."""

    hwdec = "no"

    def __init__(self) -> None:
        self.binary = os.environ.get("REEL", "reel")
        super().__init__()
        path = "v4l2" if self.hw_acceleration else "sw"
        self.name = f"reel-{path}-{self.codec.value}"
        how = "its V4L2 stateless decoder" if self.hw_acceleration else "FFmpeg's software decoder"
        self.description = f"{self.codec.value}: reel through {how}"

    def decode(
        self,
        input_filepath: str,
        output_filepath: str,
        output_format: OutputFormat,
        timeout: int,
        verbose: bool,
        keep_files: bool,
        optional_params: Optional[Dict[str, Any]] = None,
    ) -> str:
        command = [self.binary, "--hwdec", self.hwdec]
        device = os.environ.get("REEL_DEVICE")
        if self.hw_acceleration and device:
            command += ["--device", device]
        command += ["--output", "raw", "--output-file", output_filepath, input_filepath]
        run_command(command, timeout=timeout, verbose=verbose)
        return file_checksum(output_filepath)


def register(codec: Codec, hw: bool) -> None:
    """One decoder class per codec and path, as fluster's own are."""
    name = f"Reel{'V4l2' if hw else 'Sw'}{codec.name.title().replace('_', '')}Decoder"
    attributes = {"codec": codec, "hw_acceleration": hw, "hwdec": "v4l2" if hw else "no"}
    cls = type(name, (ReelDecoder,), attributes)
    # fluster's worker processes receive decoders pickled, by module name.
    cls.__module__ = __name__
    globals()[name] = cls
    register_decoder(cls)


for each in CODECS:
    register(each, hw=True)
    register(each, hw=False)

if __name__ == "__main__":
    sys.exit(fluster_main())
