//! The player: event loop, state machine, clock and pacing, commands.
