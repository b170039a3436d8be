// Cleanup on the exits a destructor never sees: fatal signals, exit(), and
// leftovers of a run that was SIGKILLed (a ctest timeout). Internal to the kit.
#pragma once

#include <string>

namespace trimd::test::cleanup {

// Installs the handlers and sweeps dead runs' leftovers; once per process.
void prepare_process_once();

// A fresh directory under $TMPDIR, named so that the sweep recognises it.
std::string make_temp_dir();

// Registers what a LoopImage must undo; throws when the table is full.
int claim_slot(const std::string& dir, const std::string& mount_point,
               const std::string& backing_file);
void release_slot(int slot);

// Keep the table current as the image is attached and mounted.
void publish_loop_fd(int slot, int fd);
void publish_mounted(int slot, bool mounted);

}  // namespace trimd::test::cleanup
