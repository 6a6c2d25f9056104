#!/usr/bin/python3
"""GStreamer's RTSP server on loopback for the network tests: each clip
given (MP4 or Matroska, H.264 or HEVC) at rtsp://127.0.0.1:PORT/NAME, its
video stream sent as RTP over UDP or interleaved in the RTSP connection, as
the client asks; at /tcp/NAME and /udp/NAME over that transport only.
At /live, a camera: GStreamer's test pattern in real time, H.264 (OpenH264),
one stream shared by its clients, no end and no length. Prints the port,
then serves until killed.

    rtsp_server.py [--port=PORT] CLIP...
"""
import os
import sys

import gi

gi.require_version("Gst", "1.0")
gi.require_version("GstRtsp", "1.0")
gi.require_version("GstRtspServer", "1.0")
from gi.repository import GLib, Gst, GstRtsp, GstRtspServer  # noqa: E402

PAYLOADERS = {"h264": "h264parse ! rtph264pay", "hevc": "h265parse ! rtph265pay"}


TRANSPORTS = {
    "": None,
    "tcp/": GstRtsp.RTSPLowerTrans.TCP,
    "udp/": GstRtsp.RTSPLowerTrans.UDP,
}


def pipeline(path):
    """Demuxer and payloader for a clip: .mkv or MP4, named *hevc* or
    *h265* for HEVC, else H.264."""
    name = os.path.basename(path).lower()
    demuxer = "matroskademux" if name.endswith(".mkv") else "qtdemux"
    codec = "hevc" if "hevc" in name or "h265" in name else "h264"
    return (
        f'( filesrc location="{path}" ! {demuxer} ! {PAYLOADERS[codec]} '
        "name=pay0 pt=96 config-interval=-1 )"
    )


LIVE = (
    "( videotestsrc is-live=true pattern=ball ! video/x-raw,width=320,height=240,framerate=25/1 "
    "! openh264enc gop-size=25 ! h264parse ! rtph264pay name=pay0 pt=96 config-interval=-1 )"
)


def main():
    Gst.init(None)
    port = "0"
    clips = []
    for arg in sys.argv[1:]:
        if arg.startswith("--port="):
            port = arg.split("=", 1)[1]
        else:
            clips.append(arg)
    server = GstRtspServer.RTSPServer()
    server.set_address("127.0.0.1")
    server.set_service(port)
    mounts = server.get_mount_points()
    live = GstRtspServer.RTSPMediaFactory()
    live.set_launch(LIVE)
    live.set_shared(True)
    mounts.add_factory("/live", live)
    for clip in clips:
        for prefix, transport in TRANSPORTS.items():
            factory = GstRtspServer.RTSPMediaFactory()
            factory.set_launch(pipeline(clip))
            if transport is not None:
                factory.set_protocols(transport)
            mounts.add_factory(f"/{prefix}{os.path.basename(clip)}", factory)
    if server.attach(None) == 0:
        sys.exit("cannot listen")
    print(server.get_bound_port(), flush=True)
    GLib.MainLoop().run()


if __name__ == "__main__":
    main()
