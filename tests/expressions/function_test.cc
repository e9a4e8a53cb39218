#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/expressions/test_batch.h"

namespace tessera {
namespace {

using namespace ::tessera::testing;  // NOLINT

using V = std::vector<std::string>;

TEST(FunctionTest, ExtractFromDatesAndTimestamps) {
  Batch batch = MakeBatch({{Type::Date(), {DateOf("1998-12-01"), DateOf("1969-02-28"), Null(Type::Date())}},
                           {Type::Timestamp(),
                            {*Str("1995-03-15 23:59:59").CastTo(Type::Timestamp()),
                             *Str("1969-12-31 23:00:00").CastTo(Type::Timestamp()), Null(Type::Timestamp())}}});
  EXPECT_EQ(Eval(*Fn(FunctionId::kExtractYear, Type::Integer(), Col(0, Type::Date())), batch),
            (V{"1998", "1969", "NULL"}));
  EXPECT_EQ(Eval(*Fn(FunctionId::kExtractMonth, Type::Integer(), Col(0, Type::Date())), batch), (V{"12", "2", "NULL"}));
  EXPECT_EQ(Eval(*Fn(FunctionId::kExtractDay, Type::Integer(), Col(0, Type::Date())), batch), (V{"1", "28", "NULL"}));
  EXPECT_EQ(Eval(*Fn(FunctionId::kExtractYear, Type::Integer(), Col(1, Type::Timestamp())), batch),
            (V{"1995", "1969", "NULL"}));
  EXPECT_EQ(Eval(*Fn(FunctionId::kExtractDay, Type::BigInt(), Col(1, Type::Timestamp())), batch),
            (V{"15", "31", "NULL"}));
}

TEST(FunctionTest, SubstringUsesSqlSemantics) {
  Batch batch = MakeBatch({{Type::Varchar(), {Str("hello"), Str("héllo"), Null(Type::Varchar()), Str("")}}});
  auto substring = [](int64_t start, int64_t length) {
    return Fn(FunctionId::kSubstring, Type::Varchar(), Col(0, Type::Varchar()), Lit(Int(static_cast<int32_t>(start))),
              Lit(Int(static_cast<int32_t>(length))));
  };
  EXPECT_EQ(Eval(*substring(2, 3), batch), (V{"ell", "éll", "NULL", ""}));
  EXPECT_EQ(Eval(*substring(0, 3), batch), (V{"he", "hé", "NULL", ""}));  // positions 0..2; 0 is before the start
  EXPECT_EQ(Eval(*substring(-1, 3), batch), (V{"h", "h", "NULL", ""}));
  EXPECT_EQ(Eval(*substring(4, 100), batch), (V{"lo", "lo", "NULL", ""}));
  EXPECT_EQ(Eval(*substring(10, 2), batch), (V{"", "", "NULL", ""}));
  EXPECT_EQ(Eval(*substring(2, 0), batch), (V{"", "", "NULL", ""}));
  EXPECT_EQ(Eval(*Fn(FunctionId::kSubstring, Type::Varchar(), Col(0, Type::Varchar()), Lit(Int(3))), batch),
            (V{"llo", "llo", "NULL", ""}));
  EXPECT_EQ(Message(EvalStatus(*substring(1, -1), batch)), "negative substring length not allowed");
  EXPECT_EQ(Eval(*Fn(FunctionId::kSubstring, Type::Varchar(), Col(0, Type::Varchar()), Lit(Int(1)),
                     Lit(Null(Type::Integer()))),
                 batch),
            V(4, "NULL"));
}

TEST(FunctionTest, CoalesceEvaluatesLaterArgumentsOnlyWhereNeeded) {
  Batch batch = MakeBatch({{Type::Integer(), {Int(1), Null(Type::Integer()), Null(Type::Integer()), Int(4)}},
                           {Type::Integer(), {Int(0), Int(20), Null(Type::Integer()), Int(0)}}});
  // COALESCE(a, 100 / b, -1): the division by zero in rows 0 and 3 is never evaluated.
  auto expr = Fn(FunctionId::kCoalesce, Type::Integer(), Col(0, Type::Integer()),
                 Arith(ArithmeticOp::kDivide, Lit(Int(100)), Col(1, Type::Integer()), Type::Integer()), Lit(Int(-1)));
  EXPECT_EQ(Eval(*expr, batch), (V{"1", "5", "-1", "4"}));
  auto two = Fn(FunctionId::kCoalesce, Type::Integer(), Col(0, Type::Integer()), Col(1, Type::Integer()));
  EXPECT_EQ(Eval(*two, batch), (V{"1", "20", "NULL", "4"}));
  // Strings keep pointing at their source.
  Batch strings = MakeBatch({{Type::Varchar(), {Null(Type::Varchar()), Str("b")}}});
  EXPECT_EQ(Eval(*Fn(FunctionId::kCoalesce, Type::Varchar(), Col(0, Type::Varchar()), Lit(Str("none"))), strings),
            (V{"none", "b"}));
}

TEST(FunctionTest, NullIf) {
  Batch batch = MakeBatch({{Type::Integer(), {Int(0), Int(5), Null(Type::Integer())}},
                           {Type::Varchar(), {Str("a"), Str("b"), Null(Type::Varchar())}}});
  EXPECT_EQ(Eval(*Fn(FunctionId::kNullIf, Type::Integer(), Col(0, Type::Integer()), Lit(Int(0))), batch),
            (V{"NULL", "5", "NULL"}));
  EXPECT_EQ(Eval(*Fn(FunctionId::kNullIf, Type::Varchar(), Col(1, Type::Varchar()), Lit(Str("b"))), batch),
            (V{"a", "NULL", "NULL"}));
  EXPECT_EQ(Eval(*Fn(FunctionId::kNullIf, Type::Integer(), Col(0, Type::Integer()), Lit(Null(Type::Integer()))), batch),
            (V{"0", "5", "NULL"}));
}

TEST(FunctionTest, Abs) {
  Batch batch =
      MakeBatch({{Type::Integer(), {Int(-3), Int(4), Null(Type::Integer())}},
                 {Type::Double(), {Dbl(-1.5), Dbl(2), Dbl(-0.0)}},
                 {Type::Decimal(30, 2), {Dec("-12345678901234567890.12", 30, 2), Dec("1", 30, 2), Dec("0", 30, 2)}},
                 {Type::Decimal(10, 2), {Dec("-0.01", 10, 2), Dec("1", 10, 2), Dec("-7", 10, 2)}}});
  EXPECT_EQ(Eval(*Fn(FunctionId::kAbs, Type::Integer(), Col(0, Type::Integer())), batch), (V{"3", "4", "NULL"}));
  EXPECT_EQ(Eval(*Fn(FunctionId::kAbs, Type::Double(), Col(1, Type::Double())), batch), (V{"1.5", "2", "0"}));
  EXPECT_EQ(Eval(*Fn(FunctionId::kAbs, Type::Decimal(30, 2), Col(2, Type::Decimal(30, 2))), batch),
            (V{"12345678901234567890.12", "1.00", "0.00"}));
  EXPECT_EQ(Eval(*Fn(FunctionId::kAbs, Type::Decimal(10, 2), Col(3, Type::Decimal(10, 2))), batch),
            (V{"0.01", "1.00", "7.00"}));
}

TEST(FunctionTest, UpperLowerLength) {
  Batch batch = MakeBatch({{Type::Varchar(), {Str("Hello Wörld"), Str("abc"), Str(""), Null(Type::Varchar())}}});
  EXPECT_EQ(Eval(*Fn(FunctionId::kUpper, Type::Varchar(), Col(0, Type::Varchar())), batch),
            (V{"HELLO WöRLD", "ABC", "", "NULL"}));
  EXPECT_EQ(Eval(*Fn(FunctionId::kLower, Type::Varchar(), Col(0, Type::Varchar())), batch),
            (V{"hello wörld", "abc", "", "NULL"}));
  EXPECT_EQ(Eval(*Fn(FunctionId::kLength, Type::Integer(), Col(0, Type::Varchar())), batch),
            (V{"11", "3", "0", "NULL"}));
  EXPECT_EQ(Eval(*Fn(FunctionId::kLength, Type::BigInt(), Lit(Str("héllo"))), batch), V(4, "5"));
  // A non-string argument is formatted first.
  EXPECT_EQ(Eval(*Fn(FunctionId::kLength, Type::Integer(), Lit(Int(-123))), batch), V(4, "4"));
}

}  // namespace
}  // namespace tessera
