# cmake -P script: splits the linked builtin library into PARTS modules, drops the unused
# declarations each part inherits (else every part repeats the whole symbol table), and packs
# the parts into one multi-module bitcode file. At run time a program then reads only the few
# parts that define what it calls (see stages.h: SplitLibrary).
# INDEX: a text file, line i listing the symbols part i defines (space-separated), so that a
# process finds a symbol's part without parsing all parts (the first build's largest cost).
# Inputs: LLVM_SPLIT, OPT, LLVM_CAT, LLVM_NM, INPUT, OUTPUT, INDEX, WORK_DIR, PARTS.
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
execute_process(COMMAND ${LLVM_SPLIT} -j ${PARTS} -o ${WORK_DIR}/part ${INPUT}
                RESULT_VARIABLE result)
if(result)
  message(FATAL_ERROR "llvm-split failed")
endif()
math(EXPR last "${PARTS} - 1")
set(stripped)
foreach(i RANGE ${last})
  execute_process(COMMAND ${OPT} -passes=strip-dead-prototypes ${WORK_DIR}/part${i}
                          -o ${WORK_DIR}/stripped${i}.bc
                  RESULT_VARIABLE result)
  if(result)
    message(FATAL_ERROR "opt failed on part ${i}")
  endif()
  list(APPEND stripped ${WORK_DIR}/stripped${i}.bc)
endforeach()
# The symbols a part defines and exports: what SplitLibrary's fallback index (made by parsing
# every part) records too; tests/compiler/builtin_index_test.cpp compares the two.
set(index "")
foreach(i RANGE ${last})
  execute_process(COMMAND ${LLVM_NM} --defined-only --extern-only --just-symbol-name
                          ${WORK_DIR}/stripped${i}.bc
                  OUTPUT_VARIABLE symbols RESULT_VARIABLE result)
  if(result)
    message(FATAL_ERROR "llvm-nm failed on part ${i}")
  endif()
  string(STRIP "${symbols}" symbols)
  string(REPLACE "\n" " " symbols "${symbols}")
  string(APPEND index "${symbols}\n")
endforeach()
file(WRITE ${INDEX} "${index}")
execute_process(COMMAND ${LLVM_CAT} -b -o ${OUTPUT} ${stripped} RESULT_VARIABLE result)
if(result)
  message(FATAL_ERROR "llvm-cat failed")
endif()
