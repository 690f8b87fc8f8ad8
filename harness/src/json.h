#pragma once
// A small, exact JSON library for the harness (which must build on GPU hosts with nothing but the
// CUDA toolkit). Integers that fit 64 bits stay exact, objects keep insertion order so reports read
// in a stable order, and the parser is strict RFC 8259 so a malformed request is refused, not
// guessed at.
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace kev::json {

namespace detail {
class Parser;
}

enum class Type { Null, Bool, Number, String, Array, Object };

const char* typeName(Type type);

// Thrown when a value is used as a type it does not have; the message names the expected type.
class TypeError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Thrown by parse(); what() reads "line:column: what was expected".
class ParseError : public std::runtime_error {
public:
    ParseError(const std::string& message, int line, int column);
    int line() const { return m_line; }
    int column() const { return m_column; }

private:
    int m_line;
    int m_column;
};

class Value {
public:
    Value() = default;
    Value(std::nullptr_t) {}
    Value(bool b);
    Value(int i);
    Value(int64_t i);
    Value(uint64_t u);
    Value(double d);
    Value(const char* s);
    Value(std::string s);
    Value(std::string_view s);
    // Other integer types (unsigned, long long, ...) would otherwise be ambiguous.
    template <typename T,
              std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool> &&
                                   !std::is_same_v<T, int> && !std::is_same_v<T, int64_t> &&
                                   !std::is_same_v<T, uint64_t>,
                               int> = 0>
    Value(T i) {
        if constexpr (std::is_signed_v<T>)
            *this = Value(static_cast<int64_t>(i));
        else
            *this = Value(static_cast<uint64_t>(i));
    }

    static Value object();
    static Value array();

    Type type() const { return m_type; }
    bool isNull() const { return m_type == Type::Null; }
    bool isBool() const { return m_type == Type::Bool; }
    bool isNumber() const { return m_type == Type::Number; }
    // True for numbers held exactly as integers (written without fraction or exponent).
    bool isInt() const { return m_type == Type::Number && m_num != NumKind::Double; }
    bool isString() const { return m_type == Type::String; }
    bool isArray() const { return m_type == Type::Array; }
    bool isObject() const { return m_type == Type::Object; }

    bool asBool() const;
    double asDouble() const;
    // Integers, and doubles with an integral value in range; anything else throws TypeError.
    int64_t asInt() const;
    uint64_t asUint() const;
    // The integer when this is a number with an integral value that fits int64_t; nullopt for
    // anything else (2^63, 1.5, a string), so range checks on outside input never throw.
    std::optional<int64_t> toInt() const;
    const std::string& asString() const;

    // Object access. operator[] turns a null value into an object and inserts missing keys.
    Value& operator[](const std::string& key);
    const Value* find(std::string_view key) const;
    Value* find(std::string_view key);
    bool contains(std::string_view key) const { return find(key) != nullptr; }
    bool erase(std::string_view key);

    // Array access. push() turns a null value into an array.
    void push(Value v);
    const Value& at(size_t index) const;
    Value& at(size_t index);

    // Elements of an array, members of an object, 0 for anything else.
    size_t size() const;
    const std::vector<Value>& elements() const;
    std::vector<Value>& elements();
    const std::vector<std::pair<std::string, Value>>& members() const;

    // Compact on one line when indent < 0 (protocol lines), otherwise pretty-printed.
    std::string dump(int indent = -1) const;

    bool operator==(const Value& other) const;
    bool operator!=(const Value& other) const { return !(*this == other); }

private:
    friend class detail::Parser;
    enum class NumKind { Int, Uint, Double };
    void requireType(Type wanted) const;
    void dumpTo(std::string& out, int indent, int level) const;

    Type m_type = Type::Null;
    NumKind m_num = NumKind::Int;
    bool m_bool = false;
    int64_t m_int = 0;
    uint64_t m_uint = 0;
    double m_double = 0.0;
    std::string m_string;
    std::vector<Value> m_elements;
    std::vector<std::pair<std::string, Value>> m_members;
};

constexpr int kMaxDepth = 256;

// What one document may hold. Parsing is linear in the input's length; the limits bound the memory
// a hostile document can make the reader allocate (every value costs ~120 bytes whatever its text)
// and what later code walking it can be made to do. A document over a limit is a ParseError naming
// the limit.
struct Limits {
    int maxDepth = kMaxDepth;
    size_t maxMembers = size_t{1} << 16;  // keys of one object
    size_t maxElements = size_t{1} << 20; // elements of one array
    size_t maxValues = size_t{1} << 21;   // values in the whole document
};

// Requests, tasks and other documents a person or an agent writes: nothing in them needs more.
Limits requestLimits();

Value parse(std::string_view text, const Limits& limits = Limits());
std::optional<Value> tryParse(std::string_view text, std::string* error,
                              const Limits& limits = Limits());

// Appends `s` to `out` as a quoted JSON string; invalid UTF-8 becomes U+FFFD so the output is
// always valid JSON, whatever bytes a compiler or a candidate wrote.
void appendQuoted(std::string& out, std::string_view s);

} // namespace kev::json
