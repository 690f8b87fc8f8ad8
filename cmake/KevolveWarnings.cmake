# kev_warnings(target): the project's warning set for C++ sources (not CUDA device code).
function(kev_warnings target)
    target_compile_options(${target} PRIVATE
        $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wold-style-cast
                                  -Wcast-align -Woverloaded-virtual -Wnull-dereference>
        $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall>)
    if(KEVOLVE_WERROR)
        target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Werror>)
    endif()
endfunction()

# kev_qt_defines(target): strict Qt string handling, as in KDAB hotspot.
function(kev_qt_defines target)
    target_compile_definitions(${target} PRIVATE QT_NO_CAST_FROM_ASCII QT_NO_CAST_TO_ASCII
                               QT_NO_CAST_FROM_BYTEARRAY QT_USE_QSTRINGBUILDER QT_NO_FOREACH
                               QT_NO_URL_CAST_FROM_STRING)
endfunction()
