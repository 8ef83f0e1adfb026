// Asynchronous signals from the host (a terminal's ^C, kill from another process) reach
// the guest's handlers: while the guest has a handler for a signal, the emulator's host
// handler records it and stops Unicorn; the run loop then delivers it. SIG_IGN and SIG_DFL
// are mirrored to the host, except SIGPIPE, which the host always ignores (a broken pipe
// then surfaces as EPIPE and the system-call layer raises SIGPIPE for the guest), and the
// signals that end a process by default (SIGINT, SIGTERM, SIGHUP ...): the host handler
// takes them at SIG_DFL too, so the guest dies in the run loop and the outputs are closed.
// With RunOptions::embedded (Python) SIG_DFL is mirrored for those as well and SIGINT is
// left to the embedder.
#pragma once

namespace padlock::emu {

class Process;

void host_signals_init(Process& p);            // start of run(): inherit ignored signals
void host_signals_restore();                   // end of run()
void host_signal_update(Process& p, int sig);  // after the guest changed sig's action
void host_signals_running(bool running);       // around uc_emu_start
int collect_host_signals(Process& p);          // queue what arrived for the guest; how many
void wait_host_signal();  // until a host signal arrives, unless one is already uncollected
// Whether a host signal arrived, not yet collected, that ends the guest (its action is the
// default and the default ends it): a wait outside the run loop (gdb's) gives way to it.
bool host_signal_ends_guest(Process& p);

}  // namespace padlock::emu
