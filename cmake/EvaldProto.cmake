# evald_proto(TARGET path/to/x.proto): compiles a .proto (path relative to the source root) so
# that its header is included as "path/to/x.pb.h", and adds the generated code to TARGET.
function(evald_proto target proto)
  get_filename_component(dir ${proto} DIRECTORY)
  get_filename_component(name ${proto} NAME_WE)
  set(out_cc ${CMAKE_BINARY_DIR}/${dir}/${name}.pb.cc)
  set(out_h ${CMAKE_BINARY_DIR}/${dir}/${name}.pb.h)
  add_custom_command(
    OUTPUT ${out_cc} ${out_h}
    COMMAND protobuf::protoc --cpp_out=${CMAKE_BINARY_DIR} -I${CMAKE_SOURCE_DIR}
            ${CMAKE_SOURCE_DIR}/${proto}
    DEPENDS ${CMAKE_SOURCE_DIR}/${proto} protobuf::protoc
    COMMENT "protoc ${proto}")
  target_sources(${target} PRIVATE ${out_cc} ${out_h})
endfunction()
