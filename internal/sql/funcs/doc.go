// Package funcs holds the scalar functions of weir's SQL dialect with
// the semantics of Apache Flink SQL: string, regular expression, LIKE,
// date and time, numeric, conditional and CAST functions, and a Registry
// that describes each by name so a planner can type-check a call and
// find its implementation.
//
// The package contract:
//
//   - Pure and deterministic. Every function is a plain Go function of
//     its arguments. Nothing reads the clock, the environment or the
//     local time zone; functions whose value depends on the moment they
//     run (CURRENT_TIMESTAMP, NOW, LOCALTIMESTAMP, UNIX_TIMESTAMP() with
//     no argument, RAND, UUID) are deliberately absent: a planner
//     evaluates them in the shell that owns the clock.
//   - Independent of rows. Arguments and results are Go values: string
//     for VARCHAR, int32 for INT, int64 for BIGINT, float64 for DOUBLE,
//     Decimal for DECIMAL(p, s), bool for BOOLEAN and time.Time for
//     TIMESTAMP(3).
//   - SQL NULL. Most functions are strict: a NULL argument makes the
//     result NULL, and the caller short-circuits that before calling, so
//     such functions take plain values (the Registry marks them Strict).
//     A function that can return NULL for non-NULL arguments returns an
//     extra bool, false meaning NULL. The few functions that look at
//     NULL arguments (COALESCE, NULLIF, IF, CONCAT_WS, GREATEST, LEAST)
//     take pointers, nil meaning NULL.
//   - Errors. A function that fails at run time in Flink (CAST('abc' AS
//     INT), integer division by zero, an invalid LIKE escape) returns an
//     error; TRY_CAST is CAST with the error turned into NULL (see Try).
//     Where Flink swallows a failure and answers NULL (an invalid regular
//     expression in REGEXP_EXTRACT, an unparsable TO_TIMESTAMP) so does
//     this package.
//   - Time zone. TIMESTAMP(3) has no zone in Flink: it is a wall-clock
//     date and time. It is represented as a time.Time in UTC whose wall
//     clock is the timestamp's, truncated to milliseconds; functions
//     read and build time.Time values in UTC only, so the session time
//     zone never matters. Epoch conversions (FROM_UNIXTIME,
//     UNIX_TIMESTAMP(string)) therefore behave as Flink does with
//     table.local-time-zone set to UTC.
//   - Characters. Strings are UTF-8; lengths, positions and padding count
//     Unicode code points (Flink counts the characters of its UTF-8
//     string type the same way), not bytes.
//   - Integer arithmetic is Java's: +, - and * on INT and BIGINT wrap on
//     overflow without error (Go's native operators already do), integer
//     division truncates toward zero, and MOD takes the sign of the
//     dividend. See Div and Mod for division by zero.
//
// Regular expressions are written in Java's dialect and run on Go's RE2
// engine; regexp.go states which constructs are refused and where the
// two differ.
package funcs
