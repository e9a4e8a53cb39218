#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/expressions/test_batch.h"

namespace tessera {
namespace {

using ::testing::HasSubstr;
using namespace ::tessera::testing;  // NOLINT

using V = std::vector<std::string>;

std::unique_ptr<BoundExpression> Binary(ArithmeticOp op, int left, int right, const Batch& batch, const Type& result) {
  return Arith(op, Col(left, batch.columns[left].type()), Col(right, batch.columns[right].type()), result);
}

TEST(ArithmeticTest, IntegersWithNulls) {
  Batch batch = MakeBatch({{Type::Integer(), {Int(7), Int(-7), Null(Type::Integer()), Int(0)}},
                           {Type::Integer(), {Int(2), Int(2), Int(3), Int(5)}}});
  const Type t = Type::Integer();
  EXPECT_EQ(Eval(*Binary(ArithmeticOp::kAdd, 0, 1, batch, t), batch), (V{"9", "-5", "NULL", "5"}));
  EXPECT_EQ(Eval(*Binary(ArithmeticOp::kSubtract, 0, 1, batch, t), batch), (V{"5", "-9", "NULL", "-5"}));
  EXPECT_EQ(Eval(*Binary(ArithmeticOp::kMultiply, 0, 1, batch, t), batch), (V{"14", "-14", "NULL", "0"}));
  EXPECT_EQ(Eval(*Binary(ArithmeticOp::kDivide, 0, 1, batch, t), batch), (V{"3", "-3", "NULL", "0"}));
  EXPECT_EQ(Eval(*Binary(ArithmeticOp::kModulo, 0, 1, batch, t), batch), (V{"1", "-1", "NULL", "0"}));
  EXPECT_EQ(Eval(*Arith(ArithmeticOp::kNegate, Col(0, t), nullptr, t), batch), (V{"-7", "7", "NULL", "0"}));
  // Mixed INTEGER and BIGINT operands are cast to the BIGINT result.
  auto mixed = Arith(ArithmeticOp::kMultiply, Col(0, t), Lit(Big(10000000000)), Type::BigInt());
  EXPECT_EQ(Eval(*mixed, batch), (V{"70000000000", "-70000000000", "NULL", "0"}));
}

TEST(ArithmeticTest, IntegerOverflowAndDivisionByZeroAreErrors) {
  const int64_t max64 = std::numeric_limits<int64_t>::max();
  const int64_t min64 = std::numeric_limits<int64_t>::min();
  Batch batch = MakeBatch({{Type::BigInt(), {Big(max64), Big(min64), Big(1)}},
                           {Type::BigInt(), {Big(1), Big(-1), Big(0)}},
                           {Type::Integer(), {Int(std::numeric_limits<int32_t>::max()), Int(1), Int(2)}}});
  absl::Status add = EvalStatus(*Binary(ArithmeticOp::kAdd, 0, 1, batch, Type::BigInt()), batch);
  EXPECT_EQ(add.code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(Message(add), "BIGINT out of range");
  SelectionVector second = Selection({1});
  EXPECT_EQ(Message(EvalStatus(*Binary(ArithmeticOp::kDivide, 0, 1, batch, Type::BigInt()), batch, &second)),
            "BIGINT out of range");  // MIN / -1
  EXPECT_EQ(Eval(*Binary(ArithmeticOp::kModulo, 0, 1, batch, Type::BigInt()), batch, &second), (V{"0"}));
  EXPECT_EQ(Message(EvalStatus(*Arith(ArithmeticOp::kNegate, Col(0, Type::BigInt()), nullptr, Type::BigInt()), batch,
                               &second)),
            "BIGINT out of range");
  SelectionVector third = Selection({0, 2});
  EXPECT_EQ(Message(EvalStatus(*Binary(ArithmeticOp::kDivide, 0, 1, batch, Type::BigInt()), batch, &third)),
            "division by zero");
  EXPECT_EQ(Message(EvalStatus(*Binary(ArithmeticOp::kModulo, 0, 1, batch, Type::BigInt()), batch)),
            "division by zero");
  // The first failing row decides the message.
  EXPECT_EQ(Message(EvalStatus(*Binary(ArithmeticOp::kDivide, 0, 1, batch, Type::BigInt()), batch)),
            "BIGINT out of range");
  EXPECT_EQ(Message(EvalStatus(*Arith(ArithmeticOp::kMultiply, Col(2, Type::Integer()), Lit(Int(2)), Type::Integer()),
                               batch)),
            "INTEGER out of range");
  EXPECT_EQ(Message(EvalStatus(*Fn(FunctionId::kAbs, Type::BigInt(), Col(0, Type::BigInt())), batch, &second)),
            "BIGINT out of range");
}

TEST(ArithmeticTest, NullRowsNeverRaiseErrors) {
  // Row 1 divides by a NULL whose slot holds 0; row 2 overflows only in its NULL slot.
  Batch batch = MakeBatch({{Type::Integer(), {Int(6), Int(5), Null(Type::Integer())}},
                           {Type::Integer(), {Int(3), Null(Type::Integer()), Int(1)}}});
  batch.columns[0].mutable_values<int32_t>()[2] = std::numeric_limits<int32_t>::max();
  EXPECT_EQ(Eval(*Binary(ArithmeticOp::kDivide, 0, 1, batch, Type::Integer()), batch), (V{"2", "NULL", "NULL"}));
  EXPECT_EQ(Eval(*Binary(ArithmeticOp::kAdd, 0, 1, batch, Type::Integer()), batch), (V{"9", "NULL", "NULL"}));
}

TEST(ArithmeticTest, Doubles) {
  Batch batch = MakeBatch(
      {{Type::Double(), {Dbl(1.5), Dbl(-2), Null(Type::Double())}}, {Type::Double(), {Dbl(0.25), Dbl(0.5), Dbl(1)}}});
  const Type t = Type::Double();
  EXPECT_EQ(Eval(*Binary(ArithmeticOp::kAdd, 0, 1, batch, t), batch), (V{"1.75", "-1.5", "NULL"}));
  EXPECT_EQ(Eval(*Binary(ArithmeticOp::kMultiply, 0, 1, batch, t), batch), (V{"0.375", "-1", "NULL"}));
  EXPECT_EQ(Eval(*Binary(ArithmeticOp::kDivide, 0, 1, batch, t), batch), (V{"6", "-4", "NULL"}));
  EXPECT_EQ(Eval(*Binary(ArithmeticOp::kModulo, 0, 1, batch, t), batch), (V{"0", "-0", "NULL"}));
  EXPECT_EQ(Message(EvalStatus(*Arith(ArithmeticOp::kDivide, Col(0, t), Lit(Dbl(0)), t), batch)), "division by zero");
}

TEST(ArithmeticTest, DecimalAddSubtractAcrossScales) {
  Batch batch =
      MakeBatch({{Type::Decimal(15, 2), {Dec("1.10", 15, 2), Dec("-2.25", 15, 2), Null(Type::Decimal(15, 2))}},
                 {Type::Decimal(15, 4), {Dec("0.0001", 15, 4), Dec("2.2500", 15, 4), Dec("1", 15, 4)}}});
  EXPECT_EQ(Eval(*Binary(ArithmeticOp::kAdd, 0, 1, batch, Type::Decimal(18, 4)), batch),
            (V{"1.1001", "0.0000", "NULL"}));
  EXPECT_EQ(Eval(*Binary(ArithmeticOp::kSubtract, 0, 1, batch, Type::Decimal(18, 4)), batch),
            (V{"1.0999", "-4.5000", "NULL"}));
  // A result scale below the operands' rounds half away from zero.
  EXPECT_EQ(Eval(*Binary(ArithmeticOp::kAdd, 0, 1, batch, Type::Decimal(18, 3)), batch), (V{"1.100", "0.000", "NULL"}));
  // Modulo at the common scale.
  EXPECT_EQ(
      Eval(*Arith(ArithmeticOp::kModulo, Col(0, Type::Decimal(15, 2)), Lit(Dec("0.3", 15, 1)), Type::Decimal(15, 2)),
           batch),
      (V{"0.20", "-0.15", "NULL"}));
  // An INTEGER operand of a DECIMAL result is cast implicitly: 1 - x.
  EXPECT_EQ(
      Eval(*Arith(ArithmeticOp::kSubtract, Lit(Int(1)), Col(0, Type::Decimal(15, 2)), Type::Decimal(16, 2)), batch),
      (V{"-0.10", "3.25", "NULL"}));
}

TEST(ArithmeticTest, DecimalMultiplyAndDivideAreExact) {
  Batch batch = MakeBatch(
      {{Type::Decimal(15, 2), {Dec("1.10", 15, 2), Dec("1.00", 15, 2), Dec("-2.00", 15, 2), Dec("10.00", 15, 2)}},
       {Type::Decimal(15, 2), {Dec("2.25", 15, 2), Dec("3.00", 15, 2), Dec("3.00", 15, 2), Dec("4.00", 15, 2)}}});
  EXPECT_EQ(Eval(*Binary(ArithmeticOp::kMultiply, 0, 1, batch, Type::Decimal(31, 4)), batch),
            (V{"2.4750", "3.0000", "-6.0000", "40.0000"}));
  // Result scales above and below s1 + s2 (rounding half away from zero).
  EXPECT_EQ(Eval(*Binary(ArithmeticOp::kMultiply, 0, 1, batch, Type::Decimal(20, 6)), batch),
            (V{"2.475000", "3.000000", "-6.000000", "40.000000"}));
  EXPECT_EQ(Eval(*Binary(ArithmeticOp::kMultiply, 0, 1, batch, Type::Decimal(20, 2)), batch),
            (V{"2.48", "3.00", "-6.00", "40.00"}));
  EXPECT_EQ(Eval(*Binary(ArithmeticOp::kMultiply, 0, 1, batch, Type::Decimal(18, 1)), batch),
            (V{"2.5", "3.0", "-6.0", "40.0"}));
  EXPECT_EQ(Eval(*Binary(ArithmeticOp::kAdd, 0, 1, batch, Type::Decimal(18, 5)), batch),
            (V{"3.35000", "4.00000", "1.00000", "14.00000"}));
  // The binder's division type: scale max(6, s1 + p2 + 1) = 18.
  EXPECT_EQ(Eval(*Binary(ArithmeticOp::kDivide, 0, 1, batch, Type::Decimal(38, 18)), batch),
            (V{"0.488888888888888889", "0.333333333333333333", "-0.666666666666666667", "2.500000000000000000"}));
  // Narrow result.
  EXPECT_EQ(Eval(*Binary(ArithmeticOp::kDivide, 0, 1, batch, Type::Decimal(18, 6)), batch),
            (V{"0.488889", "0.333333", "-0.666667", "2.500000"}));
  // A dividend that needs more than 128 bits once scaled: long division.
  Batch wide = MakeBatch(
      {{Type::Decimal(38, 0),
        {Dec("10000000000000000000000000000000000000", 38, 0), Dec("-20000000000000000000000000000000000000", 38, 0)}},
       {Type::Decimal(38, 0), {Dec("300000000000000000000", 38, 0), Dec("300000000000000000000", 38, 0)}}});
  EXPECT_EQ(Eval(*Binary(ArithmeticOp::kDivide, 0, 1, wide, Type::Decimal(38, 10)), wide),
            (V{"33333333333333333.3333333333", "-66666666666666666.6666666667"}));
}

TEST(ArithmeticTest, DecimalOverflowAndDivisionByZero) {
  Batch batch = MakeBatch({{Type::Decimal(4, 2), {Dec("99.99", 4, 2)}},
                           {Type::Decimal(4, 2), {Dec("0.01", 4, 2)}},
                           {Type::Decimal(38, 0), {Dec("90000000000000000000000000000000000000", 38, 0)}},
                           {Type::Decimal(4, 2), {Dec("0", 4, 2)}}});
  absl::Status narrow = EvalStatus(*Binary(ArithmeticOp::kAdd, 0, 1, batch, Type::Decimal(4, 2)), batch);
  EXPECT_EQ(narrow.code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(Message(narrow), "DECIMAL overflow");
  EXPECT_EQ(Eval(*Binary(ArithmeticOp::kAdd, 0, 1, batch, Type::Decimal(5, 2)), batch), (V{"100.00"}));
  EXPECT_EQ(Message(EvalStatus(*Arith(ArithmeticOp::kAdd, Col(2, Type::Decimal(38, 0)), Col(2, Type::Decimal(38, 0)),
                                      Type::Decimal(38, 0)),
                               batch)),
            "DECIMAL overflow");
  EXPECT_EQ(Message(EvalStatus(*Arith(ArithmeticOp::kMultiply, Col(2, Type::Decimal(38, 0)),
                                      Col(2, Type::Decimal(38, 0)), Type::Decimal(38, 0)),
                               batch)),
            "DECIMAL overflow");
  EXPECT_EQ(Message(EvalStatus(*Binary(ArithmeticOp::kDivide, 0, 3, batch, Type::Decimal(38, 18)), batch)),
            "division by zero");
  EXPECT_EQ(Message(EvalStatus(*Binary(ArithmeticOp::kModulo, 0, 3, batch, Type::Decimal(4, 2)), batch)),
            "division by zero");
}

// TPC-H Q1's charge: l_extendedprice * (1 - l_discount) * (1 + l_tax), with the binder's types.
TEST(ArithmeticTest, TpchQ1ChargeIsExact) {
  const Type money = Type::Decimal(15, 2);
  Batch batch = MakeBatch({{money, {Dec("17954.55", 15, 2), Dec("34850.16", 15, 2), Dec("7311.12", 15, 2)}},
                           {money, {Dec("0.04", 15, 2), Dec("0.09", 15, 2), Dec("0.10", 15, 2)}},
                           {money, {Dec("0.02", 15, 2), Dec("0.06", 15, 2), Dec("0.02", 15, 2)}}});
  auto one_minus_discount =
      Arith(ArithmeticOp::kSubtract, MakeCast(Lit(Int(1)), money), Col(1, money), Type::Decimal(16, 2));
  auto one_plus_tax = Arith(ArithmeticOp::kAdd, MakeCast(Lit(Int(1)), money), Col(2, money), Type::Decimal(16, 2));
  auto discounted = Arith(ArithmeticOp::kMultiply, Col(0, money), std::move(one_minus_discount), Type::Decimal(32, 4));
  auto charge = Arith(ArithmeticOp::kMultiply, std::move(discounted), std::move(one_plus_tax), Type::Decimal(38, 6));
  EXPECT_EQ(Eval(*charge, batch), (V{"17581.095360", "33616.464336", "6711.608160"}));
}

TEST(ArithmeticTest, DateArithmetic) {
  Batch batch = MakeBatch({{Type::Date(), {DateOf("2024-01-31"), DateOf("1998-12-01"), Null(Type::Date())}},
                           {Type::Date(), {DateOf("2023-01-31"), DateOf("1998-09-02"), DateOf("2000-01-01")}}});
  auto date = [] { return Col(0, Type::Date()); };
  EXPECT_EQ(Eval(*Arith(ArithmeticOp::kAdd, date(), Lit(IntervalOf("1 month")), Type::Date()), batch),
            (V{"2024-02-29", "1999-01-01", "NULL"}));
  EXPECT_EQ(Eval(*Arith(ArithmeticOp::kSubtract, date(), Lit(IntervalOf("90 days")), Type::Date()), batch),
            (V{"2023-11-02", "1998-09-02", "NULL"}));
  EXPECT_EQ(Eval(*Arith(ArithmeticOp::kAdd, Lit(IntervalOf("1 year")), date(), Type::Date()), batch),
            (V{"2025-01-31", "1999-12-01", "NULL"}));
  // The time part counts whole days.
  EXPECT_EQ(Eval(*Arith(ArithmeticOp::kAdd, date(), Lit(IntervalOf("36 hours")), Type::Date()), batch),
            (V{"2024-02-01", "1998-12-02", "NULL"}));
  EXPECT_EQ(Eval(*Arith(ArithmeticOp::kSubtract, date(), Col(1, Type::Date()), Type::Integer()), batch),
            (V{"365", "90", "NULL"}));
  EXPECT_EQ(Eval(*Arith(ArithmeticOp::kAdd, date(), Lit(Int(1)), Type::Date()), batch),
            (V{"2024-02-01", "1998-12-02", "NULL"}));
  // DATE + INTERVAL as TIMESTAMP, and TIMESTAMP arithmetic.
  EXPECT_EQ(Eval(*Arith(ArithmeticOp::kAdd, date(), Lit(IntervalOf("1 month 2 hours")), Type::Timestamp()), batch),
            (V{"2024-02-29 02:00:00", "1999-01-01 02:00:00", "NULL"}));
  EXPECT_EQ(Message(EvalStatus(*Arith(ArithmeticOp::kAdd, date(), Lit(Int(2000000000)), Type::Date()), batch)),
            "DATE out of range");
}

}  // namespace
}  // namespace tessera
