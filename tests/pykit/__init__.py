"""The Python test kit of the boot and browser tiers (and the two parts the
bench shares: free_port and the CI rule). One role per module:

  ci       the rule for a test that cannot run here: skip, or fail under CI=true
  checks   Checks: PASS/FAIL lines, counted; log()
  cleanup  Cleanup: undo steps run last-in first-out, kept on disk for a
           later process when a fixture outlives its setup
  proc     run() and wait_for(): a command, and a bounded wait for a condition
  net      free_port(), port_answers()
  loopfs   LoopFs: a sparse file with an ext4 on a loop device, mounted
  fixture  a tier as ctest tests: one setup, one test per check, one cleanup

The C++ kit (tests/common) and the shell rule (tests/common/ci_rule.sh) say
the same things for the other languages."""
