# trimd_fixture_tests(<label> SCRIPT <tier.py> INTERPRETER <python> [ARGS ...]
#                     [SETUP_TIMEOUT s] [CHECK_TIMEOUT s] [RUN_SERIAL])
# A tier written with tests/pykit/fixture.py as ctest tests, all labelled
# <label>: <label>_setup (FIXTURES_SETUP), one <label>_<check> per check that
# `<tier.py> list` names (FIXTURES_REQUIRED, each DEPENDS on the one before,
# so a whole run keeps the list's order; RESOURCE_LOCK <label>, so no two
# run at once even when some are left out), and <label>_cleanup
# (FIXTURES_CLEANUP). They share the state directory <binary dir>/fixture.
# The list is read at configure time and again whenever a .py file of the
# tier or of pykit changes.
function(trimd_fixture_tests label)
  cmake_parse_arguments(PARSE_ARGV 1 fx "RUN_SERIAL" "SCRIPT;INTERPRETER;SETUP_TIMEOUT;CHECK_TIMEOUT"
                        "ARGS")
  get_filename_component(tier_dir ${fx_SCRIPT} DIRECTORY)
  file(GLOB tier_sources CONFIGURE_DEPENDS ${tier_dir}/*.py ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/*.py)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${tier_sources})
  execute_process(COMMAND ${fx_INTERPRETER} -B ${fx_SCRIPT} list
                  OUTPUT_VARIABLE checks ERROR_VARIABLE error RESULT_VARIABLE status)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "${fx_SCRIPT} list failed:\n${error}")
  endif()
  string(STRIP "${checks}" checks)
  string(REPLACE "\n" ";" checks "${checks}")

  set(command ${fx_INTERPRETER} -B ${fx_SCRIPT} --state ${CMAKE_CURRENT_BINARY_DIR}/fixture
              ${fx_ARGS})
  set(common LABELS ${label} SKIP_RETURN_CODE 77 RESOURCE_LOCK ${label})
  if(fx_RUN_SERIAL)
    list(APPEND common ${TRIMD_RUN_ALONE})
  endif()
  add_test(NAME ${label}_setup COMMAND ${command} setup)
  set_tests_properties(${label}_setup PROPERTIES ${common} FIXTURES_SETUP ${label}
                       TIMEOUT ${fx_SETUP_TIMEOUT})
  add_test(NAME ${label}_cleanup COMMAND ${command} cleanup)
  set_tests_properties(${label}_cleanup PROPERTIES ${common} FIXTURES_CLEANUP ${label}
                       TIMEOUT 300)
  set(previous)
  foreach(check IN LISTS checks)
    add_test(NAME ${label}_${check} COMMAND ${command} check ${check})
    set_tests_properties(${label}_${check} PROPERTIES ${common} FIXTURES_REQUIRED ${label}
                         TIMEOUT ${fx_CHECK_TIMEOUT})
    if(previous)
      set_tests_properties(${label}_${check} PROPERTIES DEPENDS ${previous})
    endif()
    set(previous ${label}_${check})
  endforeach()
endfunction()
