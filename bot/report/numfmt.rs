//! printf-style number formats of the lkp table. Changes come as exact
//! decimals where the samples have them (`decimal_signed`), rounded half to
//! even; other numbers as binary floats.
//!
//! Rust's float formatting rounds the exact binary value to nearest (ties to
//! even), as C's printf does. lkp's Ruby differs on some near-ties (spec §3.4);
//! perfbot prints the binary value correctly rounded.

/// `%.{prec}f`
pub fn fixed(v: f64, prec: usize) -> String {
    if !v.is_finite() {
        return non_finite(v);
    }
    format!("{v:.prec$}")
}

/// `%+.{prec}f` of an exact decimal, rounded half to even (as printf rounds
/// a tie): `1.35` → `+1.4`, `-0.04` → `-0.0`.
pub fn decimal_signed(d: rust_decimal::Decimal, prec: u32) -> String {
    let r = d.round_dp_with_strategy(prec, rust_decimal::RoundingStrategy::MidpointNearestEven);
    let sign = if d.is_sign_negative() && !d.is_zero() {
        '-'
    } else {
        '+'
    };
    format!("{sign}{:.*}", prec as usize, r.abs())
}

/// `%+.{prec}f`
pub fn fixed_signed(v: f64, prec: usize) -> String {
    signed(fixed(v, prec))
}

/// `%.{prec}g` (no `#` flag: trailing zeros are removed).
pub fn general(v: f64, prec: usize) -> String {
    if !v.is_finite() {
        return non_finite(v);
    }
    let p = prec.max(1);
    if v == 0.0 {
        return if v.is_sign_negative() {
            "-0".into()
        } else {
            "0".into()
        };
    }
    let sci = format!("{:.*e}", p - 1, v);
    let (mantissa, exp) = sci.split_once('e').expect("exponent form");
    let exp: i32 = exp.parse().expect("exponent");
    if exp < -4 || exp >= p as i32 {
        let mantissa = strip_zeros(mantissa);
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exp.abs())
    } else {
        let decimals = (p as i32 - 1 - exp).max(0) as usize;
        strip_zeros(&format!("{v:.decimals$}")).to_string()
    }
}

/// `%+.{prec}g`
pub fn general_signed(v: f64, prec: usize) -> String {
    signed(general(v, prec))
}

/// `%d` of a float: Ruby truncates toward zero.
pub fn truncated(v: f64) -> String {
    if !v.is_finite() {
        return non_finite(v);
    }
    // The float's own integer, every digit of it (Ruby's `to_i` is a
    // bignum): no saturation at i64 (a spread of 1e21 is not 2^63 − 1).
    let t = v.trunc();
    if t == 0.0 {
        return "0".into();
    }
    format!("{t:.0}")
}

/// Right-align in `width` characters (a minimum: longer text is kept whole).
pub fn right(s: &str, width: usize) -> String {
    format!("{s:>width$}")
}

fn signed(s: String) -> String {
    if s.starts_with('-') {
        s
    } else {
        format!("+{s}")
    }
}

fn strip_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

fn non_finite(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v > 0.0 {
        "Inf".into()
    } else {
        "-Inf".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn general_matches_c() {
        for (v, p, want) in [
            (2.256e11, 4, "2.256e+11"),
            (1.01e9, 4, "1.01e+09"),
            (9e14, 4, "9e+14"),
            (1.045e105, 2, "1e+105"),
            (1.6e7, 2, "1.6e+07"),
            (123456.0, 4, "1.235e+05"),
            (1234.5, 4, "1234"),
            (0.0001234, 4, "0.0001234"),
            (0.00001234, 4, "1.234e-05"),
            (100.0, 2, "1e+02"),
            (99.5, 2, "1e+02"),
            (-71005.0, 4, "-7.1e+04"),
            (843050000000000.0, 4, "8.43e+14"),
        ] {
            assert_eq!(general(v, p), want, "{v} %.{p}g");
        }
    }

    #[test]
    fn signs_and_truncation() {
        assert_eq!(fixed_signed(0.0, 1), "+0.0");
        assert_eq!(fixed_signed(-0.0, 1), "-0.0");
        assert_eq!(fixed_signed(-0.04, 1), "-0.0");
        assert_eq!(general_signed(1.045e105, 2), "+1e+105");
        assert_eq!(truncated(22450504.6), "22450504");
        assert_eq!(truncated(-9753.5), "-9753");
        assert_eq!(fixed(46.555, 2), "46.55"); // 46.555 is 46.55499999... in binary
        assert_eq!(fixed(2.675, 2), "2.67");
    }
}

#[cfg(test)]
mod exact_tests {
    use super::decimal_signed;

    #[test]
    fn exact_decimals_round_half_to_even() {
        for (d, want) in [
            ("1.35", "+1.4"),
            ("1.25", "+1.2"),
            ("-1.35", "-1.4"),
            ("-0.04", "-0.0"),
            ("0", "+0.0"),
            ("1.349999", "+1.3"),
            ("99999.95", "+100000.0"),
        ] {
            assert_eq!(decimal_signed(d.parse().unwrap(), 1), want, "{d}");
        }
    }
}

#[cfg(test)]
mod truncated_tests {
    #[test]
    fn floats_truncate_to_their_whole_integer() {
        for (v, want) in [
            (3.9, "3"),
            (-3.9, "-3"),
            (-0.4, "0"),
            (1e21, "1000000000000000000000"),
            (9.3e18, "9300000000000000000"),
        ] {
            assert_eq!(super::truncated(v), want, "{v}");
        }
    }
}
