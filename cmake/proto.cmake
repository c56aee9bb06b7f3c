# matserve_proto_library(NAME PROTO_ROOT DIR PROTOS a.proto ...)
# Generates C++ messages and gRPC stubs for PROTOS (paths relative to DIR) into the build tree and
# wraps them in a static library NAME; Python modules for the same files go to
# ${CMAKE_BINARY_DIR}/python (target NAME_python) for the interop tests.
function(matserve_proto_library name)
  cmake_parse_arguments(ARG "" "PROTO_ROOT" "PROTOS" ${ARGN})
  set(cpp_out ${CMAKE_BINARY_DIR}/gen)
  set(py_out ${CMAKE_BINARY_DIR}/python)
  file(MAKE_DIRECTORY ${cpp_out} ${py_out})
  set(sources)
  set(py_files)
  foreach(proto ${ARG_PROTOS})
    string(REGEX REPLACE "\\.proto$" "" stem ${proto})
    set(outputs ${cpp_out}/${stem}.pb.cc ${cpp_out}/${stem}.pb.h
                ${cpp_out}/${stem}.grpc.pb.cc ${cpp_out}/${stem}.grpc.pb.h)
    add_custom_command(
      OUTPUT ${outputs}
      COMMAND protobuf::protoc -I ${ARG_PROTO_ROOT} --cpp_out ${cpp_out} --grpc_out ${cpp_out}
              --plugin=protoc-gen-grpc=${GRPC_CPP_PLUGIN} ${proto}
      DEPENDS ${ARG_PROTO_ROOT}/${proto}
      WORKING_DIRECTORY ${ARG_PROTO_ROOT}
      COMMENT "protoc (C++) ${proto}")
    list(APPEND sources ${cpp_out}/${stem}.pb.cc ${cpp_out}/${stem}.grpc.pb.cc)
    set(py_outputs ${py_out}/${stem}_pb2.py ${py_out}/${stem}_pb2_grpc.py)
    add_custom_command(
      OUTPUT ${py_outputs}
      COMMAND protobuf::protoc -I ${ARG_PROTO_ROOT} --python_out ${py_out} --grpc_python_out ${py_out}
              --plugin=protoc-gen-grpc_python=${GRPC_PYTHON_PLUGIN} ${proto}
      DEPENDS ${ARG_PROTO_ROOT}/${proto}
      WORKING_DIRECTORY ${ARG_PROTO_ROOT}
      COMMENT "protoc (Python) ${proto}")
    list(APPEND py_files ${py_outputs})
  endforeach()
  add_library(${name} STATIC ${sources})
  target_include_directories(${name} PUBLIC ${cpp_out})
  target_link_libraries(${name} PUBLIC protobuf::libprotobuf gRPC::grpc++)
  add_custom_target(${name}_python ALL DEPENDS ${py_files})
endfunction()
