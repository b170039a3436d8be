# The introspection XML as sdbus-c++-xml2cpp is given it: without trimd's
# own build-time annotations (org.trimd.trimd1.*, read by the generators in
# xml_properties.cmake), which it would warn about and ignore.
#   cmake -DXML=org.trimd.trimd1.xml -DOUT=build/org.trimd.trimd1.xml -P wire_xml.cmake
cmake_minimum_required(VERSION 3.20)  # run with -P: the policies of 3.20
include(${CMAKE_CURRENT_LIST_DIR}/xml_properties.cmake)

file(READ "${XML}" xml)
string(REGEX REPLACE "[ ]*<annotation name=\"org\\.trimd\\.trimd1\\.[A-Za-z]+\" value=\"[^\"]*\"/>\n" ""
       xml "${xml}")
trimd_write_if_changed("${OUT}" "${xml}")
