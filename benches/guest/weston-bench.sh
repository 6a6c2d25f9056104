# (in the test guest, sourced) weston 14 headless for the benchmarks
# present runs (benches/guest/compare.sh, benches/guest/ab.sh): GL
# renderer, 60 Hz, desktop shell, a 160x90 output (compare.sh says why),
# no fade-in, the protocol log (WAYLAND_DEBUG=server) in $R/NAME.weston
# with a wall-clock mark where the player starts. Needs R (the results
# directory) and XDG_RUNTIME_DIR.

# No fade-in: it would repaint the output while the player starts.
printf '[shell]\nstartup-animation=none\n' >"$R/weston-bench.ini"

# weston_up NAME: a fresh weston for one present run, its log in NAME.weston.
weston_up() {
    log=$R/$1.weston
    # Appended to by weston and by the mark below: both keep their place.
    : >"$log"
    WAYLAND_DEBUG=server weston --backend=headless --renderer=gl --shell=desktop --idle-time=0 \
        --config="$R/weston-bench.ini" --width=160 --height=90 --socket=wl-bench >>"$log" 2>&1 &
    WESTON=$!
    export WAYLAND_DISPLAY=wl-bench
    # Up once the desktop shell's background has been composited: weston's
    # first repaint (llvmpipe compiling its shaders) takes seconds under
    # TCG, and a player started before it would find its first frames
    # late.
    tries=0
    until background_shown "$log"; do
        tries=$((tries + 1))
        if [ $tries -gt 600 ]; then
            echo "weston did not come up" >&2
            cat "$log" >&2
            exit 3
        fi
        sleep 0.2
    done
    # The wall clock in ns: the first picture on screen is timed from it.
    echo "bench: player starts at $(date +%s%N)" >>"$log"
}

# background_shown LOG: the frame callback of the desktop shell's background
# surface has fired.
background_shown() {
    surface=$(grep -o 'set_background(wl_output#[0-9]*, wl_surface#[0-9]*' "$1" | grep -o 'wl_surface#[0-9]*$') ||
        return 1
    callback=$(grep -o "$surface\.frame(new id wl_callback#[0-9]*" "$1" | head -n 1 | grep -o 'wl_callback#[0-9]*$') ||
        return 1
    grep -q -- "-> $callback\.done(" "$1"
}

weston_down() {
    kill "$WESTON" 2>/dev/null || true
    wait "$WESTON" 2>/dev/null || true
    unset WAYLAND_DISPLAY
}

