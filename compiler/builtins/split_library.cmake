# cmake -P script: splits the linked builtin library into PARTS modules, drops the unused
# declarations each part inherits (else every part repeats the whole symbol table), and packs
# the parts into one multi-module bitcode file. At run time a program then reads only the few
# parts that define what it calls (see cpu_pipeline.cpp: BuiltinLibrary).
# Inputs: LLVM_SPLIT, OPT, LLVM_CAT, INPUT, OUTPUT, WORK_DIR, PARTS.
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
execute_process(COMMAND ${LLVM_CAT} -b -o ${OUTPUT} ${stripped} RESULT_VARIABLE result)
if(result)
  message(FATAL_ERROR "llvm-cat failed")
endif()
