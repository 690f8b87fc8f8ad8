#include "json.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>

using kev::json::parse;
using kev::json::ParseError;
using kev::json::TypeError;
using kev::json::Value;

namespace {

std::string parseErrorOf(std::string_view text) {
    std::string error;
    EXPECT_FALSE(kev::json::tryParse(text, &error).has_value()) << text;
    return error;
}

} // namespace

TEST(Json, ScalarsParse) {
    EXPECT_TRUE(parse("null").isNull());
    EXPECT_TRUE(parse("true").asBool());
    EXPECT_FALSE(parse(" false ").asBool());
    EXPECT_EQ(parse("\"hi\"").asString(), "hi");
    EXPECT_EQ(parse("-0").asInt(), 0);
    EXPECT_DOUBLE_EQ(parse("1.5e3").asDouble(), 1500.0);
    EXPECT_DOUBLE_EQ(parse("-2.25E-2").asDouble(), -0.0225);
}

TEST(Json, IntegersStayExact) {
    const Value big = parse("9007199254740993"); // 2^53 + 1: a double would round it
    EXPECT_TRUE(big.isInt());
    EXPECT_EQ(big.asInt(), 9007199254740993LL);
    EXPECT_EQ(big.dump(), "9007199254740993");

    const Value minI = parse("-9223372036854775808");
    EXPECT_EQ(minI.asInt(), std::numeric_limits<int64_t>::min());

    const Value maxU = parse("18446744073709551615");
    EXPECT_TRUE(maxU.isInt());
    EXPECT_EQ(maxU.asUint(), std::numeric_limits<uint64_t>::max());
    EXPECT_EQ(maxU.dump(), "18446744073709551615");
    EXPECT_THROW(maxU.asInt(), TypeError);

    const Value huge = parse("184467440737095516160");
    EXPECT_FALSE(huge.isInt());
    EXPECT_DOUBLE_EQ(huge.asDouble(), 1.8446744073709552e20);

    EXPECT_EQ(Value(uint64_t{12345678901234567890ULL}).dump(), "12345678901234567890");
    EXPECT_EQ(Value(-3).dump(), "-3");
    EXPECT_EQ(Value(7u).asInt(), 7);
    EXPECT_EQ(Value(7LL).asInt(), 7);
}

TEST(Json, FractionsAreNotIntegers) {
    EXPECT_FALSE(parse("4096.0").isInt());
    EXPECT_EQ(parse("4096.0").asInt(), 4096); // integral value: converts
    EXPECT_THROW(parse("3.5").asInt(), TypeError);
    EXPECT_THROW(parse("-1").asUint(), TypeError);
}

TEST(Json, DoublesRoundTrip) {
    for (double d : {0.1, 1.0 / 3.0, 6.02214076e23, 5e-324, -1.7976931348623157e308, 2.0}) {
        const Value back = parse(Value(d).dump());
        EXPECT_FALSE(back.isInt()) << Value(d).dump();
        EXPECT_EQ(back.asDouble(), d);
    }
    EXPECT_EQ(Value(2.0).dump(), "2.0");
    EXPECT_EQ(Value(0.25).dump(), "0.25");
}

TEST(Json, NonFiniteDumpsAsNull) {
    EXPECT_EQ(Value(std::nan("")).dump(), "null");
    EXPECT_EQ(Value(std::numeric_limits<double>::infinity()).dump(), "null");
}

TEST(Json, ObjectsKeepInsertionOrder) {
    Value obj = Value::object();
    obj["zeta"] = 1;
    obj["alpha"] = "two";
    obj["mid"] = Value::array();
    obj["mid"].push(true);
    obj["mid"].push(Value());
    obj["zeta"] = 3; // overwrite keeps position
    EXPECT_EQ(obj.dump(), R"({"zeta":3,"alpha":"two","mid":[true,null]})");
    const Value back = parse(obj.dump());
    EXPECT_EQ(back, obj);
    ASSERT_EQ(back.members().size(), 3u);
    EXPECT_EQ(back.members()[1].first, "alpha");

    const Value parsed = parse(R"({"b":1,"a":2,"c":3})");
    EXPECT_EQ(parsed.dump(), R"({"b":1,"a":2,"c":3})");
}

TEST(Json, AccessorsAndErrors) {
    Value obj = parse(R"({"a":[1,2,3],"s":"x"})");
    EXPECT_TRUE(obj.contains("a"));
    EXPECT_FALSE(obj.contains("b"));
    EXPECT_EQ(obj.find("b"), nullptr);
    EXPECT_EQ(obj.size(), 2u);
    EXPECT_EQ(obj["a"].size(), 3u);
    EXPECT_EQ(obj["a"].at(2).asInt(), 3);
    EXPECT_THROW(obj["a"].at(3), std::out_of_range);
    EXPECT_EQ(obj["a"].elements().size(), 3u);
    EXPECT_TRUE(obj.erase("s"));
    EXPECT_FALSE(obj.erase("s"));
    EXPECT_EQ(obj.dump(), R"({"a":[1,2,3]})");

    try {
        obj["a"].asString();
        FAIL() << "no TypeError";
    } catch (const TypeError& e) {
        EXPECT_STREQ(e.what(), "expected a string, got an array");
    }
    EXPECT_THROW(Value(1).asBool(), TypeError);
    EXPECT_THROW(Value("x").asDouble(), TypeError);
    EXPECT_THROW(Value(true).push(1), TypeError);
    Value str("s");
    EXPECT_THROW(str["k"], TypeError);
    EXPECT_THROW(Value(1).members(), TypeError);

    Value nullBecomesObject;
    nullBecomesObject["k"] = 1;
    EXPECT_TRUE(nullBecomesObject.isObject());
    Value nullBecomesArray;
    nullBecomesArray.push(1);
    EXPECT_TRUE(nullBecomesArray.isArray());
}

TEST(Json, StringEscapes) {
    EXPECT_EQ(parse(R"("a\"b\\c\/d\b\f\n\r\t")").asString(), "a\"b\\c/d\b\f\n\r\t");
    EXPECT_EQ(parse(R"("\u0041\u00e9\u20ac")").asString(), "A\xC3\xA9\xE2\x82\xAC");
    EXPECT_EQ(parse(R"("\ud83d\ude00")").asString(), "\xF0\x9F\x98\x80"); // U+1F600
    EXPECT_EQ(parse("\"\xF0\x9F\x98\x80 \xC3\xA9\"").asString(), "\xF0\x9F\x98\x80 \xC3\xA9");

    const std::string control{"\x01\x1f\x7f\n\"\\", 6};
    EXPECT_EQ(Value(control).dump(), R"("\u0001\u001f)"
                                     "\x7f"
                                     R"(\n\"\\")");
    EXPECT_EQ(parse(Value(control).dump()).asString(), control);
    EXPECT_EQ(Value(std::string("nul\0x", 5)).dump(), R"("nul\u0000x")");
    // Valid UTF-8 passes through unescaped.
    EXPECT_EQ(Value("\xE2\x82\xAC").dump(), "\"\xE2\x82\xAC\"");
}

TEST(Json, InvalidUtf8IsReplacedOnDump) {
    EXPECT_EQ(Value("a\xFF"
                    "b")
                  .dump(),
              "\"a\xEF\xBF\xBD"
              "b\"");
    EXPECT_EQ(Value("\xC0\xAF").dump(), "\"\xEF\xBF\xBD\xEF\xBF\xBD\""); // overlong
    EXPECT_EQ(Value("\xED\xA0\x80").dump(),
              "\"\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\"");               // encoded surrogate
    EXPECT_EQ(Value("\xE2\x82").dump(), "\"\xEF\xBF\xBD\xEF\xBF\xBD\""); // truncated
}

TEST(Json, PrettyPrint) {
    const Value v = parse(R"({"a":[1,{"b":null}],"c":{},"d":[]})");
    EXPECT_EQ(v.dump(2), "{\n  \"a\": [\n    1,\n    {\n      \"b\": null\n    }\n  ],\n"
                         "  \"c\": {},\n  \"d\": []\n}");
    EXPECT_EQ(parse(v.dump(4)), v);
}

TEST(Json, ParseErrorsNamePositionAndExpectation) {
    try {
        parse("{\n  \"a\": 1,\n  \"b\" 2\n}");
        FAIL() << "no ParseError";
    } catch (const ParseError& e) {
        EXPECT_EQ(e.line(), 3);
        EXPECT_EQ(e.column(), 7);
        EXPECT_STREQ(e.what(), "3:7: expected ':' after an object key, got '2'");
    }
    EXPECT_EQ(parseErrorOf("[1,2"), "1:5: expected ',' or ']' after an array element, got the end "
                                    "of the input");
    EXPECT_EQ(parseErrorOf(""), "1:1: expected a value, got the end of the input");
    EXPECT_EQ(parseErrorOf("{\"a\":1} x"),
              "1:9: expected the end of the document after the value, got 'x'");
}

TEST(Json, StrictGrammar) {
    const char* bad[] = {
        "[1,]",               // trailing comma
        "{\"a\":1,}",         // trailing comma in object
        "{a:1}",              // unquoted key
        "'x'",                // single quotes
        "01",                 // leading zero
        "-",                  // sign alone
        "1.",                 // no fraction digits
        ".5",                 // no integer part
        "1e",                 // no exponent digits
        "+1",                 // plus sign
        "NaN",                // not JSON
        "Infinity",           // not JSON
        "tru",                // truncated literal
        "nul",                // truncated literal
        "\"a",                // unterminated string
        "\"a\tb\"",           // raw control character
        "\"\\x41\"",          // invalid escape
        "\"\\u12\"",          // short \u escape
        "\"\\u12G4\"",        // bad hex digit
        "\"\\udc00\"",        // lone low surrogate
        "\"\\ud800\"",        // lone high surrogate
        "\"\\ud800\\u0041\"", // high surrogate + non-surrogate
        "\"\xFF\"",           // invalid UTF-8
        "\"\xC0\xAF\"",       // overlong UTF-8
        "{\"a\":1,\"a\":2}",  // duplicate key
        "[1] [2]",            // two documents
        "1e400",              // overflows a double
        "\v1",                // vertical tab is not JSON whitespace
        "/* c */ 1",          // comments
    };
    for (const char* text : bad)
        EXPECT_THROW(parse(text), ParseError) << text;
}

TEST(Json, DepthLimit) {
    const std::string ok = std::string(256, '[') + std::string(256, ']');
    EXPECT_NO_THROW(parse(ok));
    const std::string deep = std::string(257, '[') + std::string(257, ']');
    EXPECT_NE(parseErrorOf(deep).find("nesting deeper than 256"), std::string::npos);
    const std::string deepObj = [] {
        std::string s;
        for (int i = 0; i < 300; ++i)
            s += "{\"a\":";
        s += "1";
        for (int i = 0; i < 300; ++i)
            s += "}";
        return s;
    }();
    EXPECT_THROW(parse(deepObj), ParseError);
}

TEST(Json, WhitespaceAndBom) {
    EXPECT_EQ(parse(" \t\r\n[ 1 , 2 ]\n").size(), 2u);
    EXPECT_EQ(parse("\xEF\xBB\xBF{}").size(), 0u);
    EXPECT_DOUBLE_EQ(parse("1e-400").asDouble(), 0.0);
}

TEST(Json, Equality) {
    EXPECT_EQ(parse("1"), Value(1.0));
    EXPECT_NE(parse("1"), Value("1"));
    EXPECT_NE(parse("[1,2]"), parse("[2,1]"));
    EXPECT_NE(parse(R"({"a":1,"b":2})"), parse(R"({"b":2,"a":1})")); // order is part of the value
    EXPECT_EQ(parse("18446744073709551615"), Value(std::numeric_limits<uint64_t>::max()));
}

// Issue 24: an object of 100,000 keys took 93 s (every key was compared with every earlier one).
// Parsing is now linear; this size would take minutes quadratically, so the ctest time-out is what
// fails if the quadratic step comes back (nothing here measures time).
TEST(Json, LargeObjectsParseWholeAndFindDuplicatesAnywhere) {
    const size_t n = 60000;
    std::string text = "{";
    for (size_t i = 0; i < n; ++i)
        text += (i ? ",\"k" : "\"k") + std::to_string(i) + "\":" + std::to_string(i);
    const Value v = parse(text + "}");
    ASSERT_EQ(v.size(), n);
    EXPECT_EQ(v.members()[0].first, "k0");
    EXPECT_EQ(v.members()[n - 1].first, "k" + std::to_string(n - 1));
    EXPECT_EQ(v.find("k31337")->asInt(), 31337);
    // A duplicate of the first key at the end, and of a key seen past the linear-scan prefix.
    EXPECT_NE(parseErrorOf(text + ",\"k0\":1}").find("duplicate key \"k0\""), std::string::npos);
    EXPECT_NE(parseErrorOf(text + ",\"k59999\":1}").find("duplicate key \"k59999\""),
              std::string::npos);
    // Duplicates inside the small prefix too.
    EXPECT_NE(parseErrorOf(R"({"a":1,"b":2,"c":3,"b":4})").find("duplicate key \"b\""),
              std::string::npos);
}

TEST(Json, LimitsBoundWhatADocumentHolds) {
    kev::json::Limits small;
    small.maxDepth = 3;
    small.maxMembers = 2;
    small.maxElements = 3;
    small.maxValues = 6;
    const auto errorOf = [&](const std::string& text) {
        try {
            kev::json::parse(text, small);
        } catch (const ParseError& e) {
            return std::string(e.what());
        }
        return std::string("<parsed>");
    };
    EXPECT_EQ(errorOf(R"({"a":1,"b":2})"), "<parsed>");
    EXPECT_EQ(errorOf(R"({"a":1,"b":2,"c":3})"), "1:14: an object with more than 2 keys");
    EXPECT_EQ(errorOf("[1,2,3]"), "<parsed>");
    EXPECT_EQ(errorOf("[1,2,3,4]"), "1:8: an array with more than 3 elements");
    EXPECT_EQ(errorOf("[[[1]]]"), "<parsed>");
    EXPECT_EQ(errorOf("[[[[1]]]]"), "1:4: nesting deeper than 3 levels");
    EXPECT_EQ(errorOf("[[1,2],[3]]"), "<parsed>");
    EXPECT_EQ(errorOf("[[1,2],[3,4]]"), "1:11: more than 6 values in one document");

    // A 16 MiB integer array (issue 24: 1 GB of memory) is refused under the request limits.
    std::string big = "[";
    for (size_t i = 0; i < (size_t{8} << 20); ++i)
        big += i ? ",1" : "1";
    big += "]";
    std::string error;
    EXPECT_FALSE(kev::json::tryParse(big, &error, kev::json::requestLimits()));
    EXPECT_NE(error.find("an array with more than 65536 elements"), std::string::npos) << error;
    EXPECT_FALSE(kev::json::tryParse(big, &error));
    EXPECT_NE(error.find("an array with more than 1048576 elements"), std::string::npos) << error;
}

TEST(Json, ToIntNeverThrows) {
    EXPECT_EQ(parse("7").toInt(), std::optional<int64_t>(7));
    EXPECT_EQ(parse("-9223372036854775808").toInt(), std::optional<int64_t>(INT64_MIN));
    EXPECT_EQ(parse("4096.0").toInt(), std::optional<int64_t>(4096));
    EXPECT_FALSE(parse("9223372036854775808").toInt());  // 2^63: held as uint64
    EXPECT_FALSE(parse("18446744073709551616").toInt()); // 2^64: a double
    EXPECT_FALSE(parse("9.3e18").toInt());
    EXPECT_FALSE(parse("1.5").toInt());
    EXPECT_FALSE(parse("\"1\"").toInt());
    EXPECT_FALSE(parse("null").toInt());
    EXPECT_THROW(parse("9223372036854775808").asInt(), kev::json::TypeError);
}
