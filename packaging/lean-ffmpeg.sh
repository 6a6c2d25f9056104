#!/bin/sh
# An FFmpeg configured with only what reel uses, built from Debian's own
# source of the FFmpeg the system has (same version, same patches), and
# reel built against it: what an image builder for a board (Buildroot,
# Yocto) would do. Debian's FFmpeg links ~140 libraries for encoders,
# filters and devices reel never calls, and loading them is most of reel's
# start-up on a board (BENCHMARKS.md). Not part of CI: it builds FFmpeg.
#
#   packaging/lean-ffmpeg.sh [OUT]      (OUT: target/lean-ffmpeg)
#
# Leaves OUT/prefix (FFmpeg's shared libraries, headers and pkg-config
# files) and OUT/reel, a release build of reel that finds those libraries
# through its rpath, then checks that OUT/reel's framemd5 of the bundled
# sample equals that of a reel built against Debian's FFmpeg (target/release/
# reel, built if missing) and prints the libraries each one loads.
# benches/guest-ab.sh compares the two in the test guest:
#   benches/guest-ab.sh 3 target/release/reel target/lean-ffmpeg/reel gst
#
# Shared libraries in a private prefix, not a static FFmpeg: a board's image
# has one FFmpeg for all its programs, and ffmpeg-sys-next's static linking
# would need every dependency's static archive (GnuTLS, dav1d) in the image
# builder's sysroot too. The rpath keeps this reel off the system's FFmpeg
# and the system's programs off this one.
#
# Needs the build tools below (installed with apt-get when run as root) and
# the distribution's source packages, read through the same mirrors as the
# system's binary packages (a private apt state under OUT/apt: the system's
# apt configuration is not changed).
set -eu
project=$(cd "$(dirname "$0")/.." && pwd)
out=$(mkdir -p "${1:-$project/target/lean-ffmpeg}" && cd "${1:-$project/target/lean-ffmpeg}" && pwd)
jobs=$(nproc)

say() { echo "lean-ffmpeg: $*" >&2; }

# What reel takes from FFmpeg: demuxers and parsers for its containers and
# elementary streams (the network ones for URLs), bitstream filters, the
# software decoders (video for where no V4L2 decoder exists, AV1 through
# libdav1d as Debian's; audio; PNG/JPEG cover art), libswscale and
# libswresample.
demuxers=mov,matroska,ivf,mpegts,mpegps,flv,h264,hevc,obu,mpegvideo,aac,mp3,ogg,flac,wav,hls,rtsp,rtp,sdp
parsers=h264,hevc,vp8,vp9,av1,mpegvideo,aac,mpegaudio,opus,vorbis,flac,png,mjpeg
decoders=h264,hevc,vp8,vp9,mpeg2video,libdav1d,aac,mp3,mp3float,opus,vorbis,flac,pcm_s16le,pcm_s24le,pcm_s32le,pcm_f32le,png,mjpeg
bsfs=h264_mp4toannexb,hevc_mp4toannexb,vp9_superframe_split,av1_frame_split,extract_extradata
protocols=file,pipe,http,https,tcp,tls,udp,rtp,crypto,hls

build_deps="dpkg-dev nasm pkg-config libdav1d-dev libgnutls28-dev"
missing=$(for p in $build_deps; do
    dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q 'ok installed' || printf '%s ' "$p"
done)
if [ -n "$missing" ]; then
    if [ "$(id -u)" = 0 ]; then
        say "installing $missing"
        # shellcheck disable=SC2086
        apt-get install -y --no-install-recommends $missing >/dev/null
    else
        say "needs: $missing (apt-get install them, or run as root)"
        exit 1
    fi
fi

# Debian's source of the FFmpeg installed here.
version=$(dpkg-query -W -f='${source:Version}' libavcodec-dev 2>/dev/null || true)
if [ -z "$version" ]; then
    say "libavcodec-dev is not installed (packaging/install-deps.sh installs it)"
    exit 1
fi
upstream=$(echo "$version" | sed 's/^[0-9]*://; s/-[^-]*$//')
src="$out/source/ffmpeg-$upstream"
if [ ! -x "$src/configure" ]; then
    say "fetching Debian's ffmpeg $version source"
    apt_dir="$out/apt"
    rm -rf "$apt_dir" "$out/source"
    mkdir -p "$apt_dir/sources.list.d" "$apt_dir/lists/partial" "$out/source"
    # The system's binary package sources, as source package sources.
    for f in /etc/apt/sources.list.d/*.sources; do
        [ -e "$f" ] || continue
        sed 's/^Types:.*/Types: deb-src/' "$f" >"$apt_dir/sources.list.d/$(basename "$f")"
    done
    if [ -f /etc/apt/sources.list ]; then
        sed -n 's/^deb /deb-src /p' /etc/apt/sources.list >"$apt_dir/sources.list"
    else
        : >"$apt_dir/sources.list"
    fi
    apt_opts="-o Dir::Etc::SourceList=$apt_dir/sources.list
        -o Dir::Etc::SourceParts=$apt_dir/sources.list.d
        -o Dir::State::Lists=$apt_dir/lists"
    # shellcheck disable=SC2086
    apt-get $apt_opts update >/dev/null
    # shellcheck disable=SC2086
    (cd "$out/source" && apt-get $apt_opts source "ffmpeg=$version" >/dev/null)
fi

prefix="$out/prefix"
if [ ! -f "$prefix/lib/pkgconfig/libavcodec.pc" ]; then
    say "configuring and building FFmpeg $upstream ($jobs jobs)"
    rm -rf "$out/build" "$prefix"
    mkdir -p "$out/build"
    (
        cd "$out/build"
        "$src/configure" --prefix="$prefix" \
            --enable-shared --disable-static --disable-programs --disable-doc \
            --disable-avdevice --disable-avfilter --disable-postproc \
            --disable-autodetect --disable-everything \
            --enable-gnutls --enable-libdav1d \
            --enable-protocol="$protocols" --enable-demuxer="$demuxers" \
            --enable-parser="$parsers" --enable-decoder="$decoders" \
            --enable-bsf="$bsfs" --enable-swscale --enable-swresample \
            >configure.log
        make -j"$jobs" >make.log 2>&1
        make install >install.log 2>&1
    )
fi

say "building reel against it"
PKG_CONFIG_PATH="$prefix/lib/pkgconfig" \
    RUSTFLAGS="-C link-arg=-Wl,-rpath,$prefix/lib" \
    cargo build --release --locked --bin reel \
    --manifest-path "$project/Cargo.toml" --target-dir "$out/cargo"
cp "$out/cargo/release/reel" "$out/reel"

if [ ! -x "$project/target/release/reel" ]; then
    say "building reel against Debian's FFmpeg, to compare"
    cargo build --release --locked --bin reel --manifest-path "$project/Cargo.toml"
fi
sample="$project/assets/sample.mp4"
lean=$("$out/reel" --hwdec no --output framemd5 "$sample" | md5sum)
debian=$("$project/target/release/reel" --hwdec no --output framemd5 "$sample" | md5sum)
libs() { ldd "$1" | wc -l; }
say "libraries loaded: $(libs "$out/reel") (Debian's FFmpeg: $(libs "$project/target/release/reel"))"
if [ "$lean" != "$debian" ]; then
    say "the framemd5 of $sample differs from the Debian build's"
    exit 1
fi
say "framemd5 of $sample: the same as with Debian's FFmpeg"
say "done: $out/reel"
