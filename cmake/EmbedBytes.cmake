# cmake -DIN=FILE -DOUT=FILE.cc -DNAME=kSymbol -P EmbedBytes.cmake: FILE's bytes as
# `evald::generated::NAME` (unsigned char[]) and NAME##Size, for data compiled into a binary.
file(READ ${IN} hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
file(WRITE ${OUT}
     "// Generated from ${IN} by cmake/EmbedBytes.cmake: do not edit.\n"
     "#include <cstddef>\n"
     "namespace evald::generated {\n"
     "extern const unsigned char ${NAME}[];\n"
     "extern const size_t ${NAME}Size;\n"
     "const unsigned char ${NAME}[] = {${bytes}};\n"
     "const size_t ${NAME}Size = sizeof(${NAME});\n"
     "}  // namespace evald::generated\n")
