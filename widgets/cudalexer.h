// C++ highlighting plus CUDA: execution-space and memory qualifiers, built-in variables and
// intrinsics as a second keyword set, vector and half types as global classes.
#pragma once

#include <Qsci/qscilexercpp.h>

namespace kev {

class CudaLexer : public QsciLexerCPP {
    Q_OBJECT
public:
    explicit CudaLexer(QObject* parent = nullptr);

    const char* language() const override;
    const char* keywords(int set) const override;
    QColor defaultColor(int style) const override;
    QFont defaultFont(int style) const override;
};

} // namespace kev
