//! [`Magic`]: truncating division of 64-bit integers by a constant as a
//! multiplication (Hacker's Delight, 10-1): `div` and `rem` by a constant
//! need no `idiv`, which costs tens of cycles.

/// How to divide by a constant `d` (`|d| >= 2`): `q = mulhi(n, m)`, then
/// `q += n` if `d > 0` and `m < 0` (`q -= n` if `d < 0` and `m > 0`),
/// `q >>= shift` (arithmetic), and `q += 1` if `q` is negative.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Magic {
    pub(crate) multiplier: i64,
    pub(crate) shift: u32,
}

impl Magic {
    /// The magic numbers for `d`; `None` for -1, 0 and 1.
    pub(crate) fn of(d: i64) -> Option<Magic> {
        if (-1..=1).contains(&d) {
            return None;
        }
        const TWO63: u64 = 1 << 63;
        let ad = d.unsigned_abs();
        let t = TWO63 + ((d as u64) >> 63);
        // The absolute value of nc.
        let anc = t - 1 - t % ad;
        let mut p = 63;
        let (mut q1, mut r1) = (TWO63 / anc, TWO63 % anc);
        let (mut q2, mut r2) = (TWO63 / ad, TWO63 % ad);
        loop {
            p += 1;
            q1 = q1.wrapping_mul(2);
            r1 = r1.wrapping_mul(2);
            if r1 >= anc {
                q1 = q1.wrapping_add(1);
                r1 = r1.wrapping_sub(anc);
            }
            q2 = q2.wrapping_mul(2);
            r2 = r2.wrapping_mul(2);
            if r2 >= ad {
                q2 = q2.wrapping_add(1);
                r2 = r2.wrapping_sub(ad);
            }
            let delta = ad - r2;
            if !(q1 < delta || (q1 == delta && r1 == 0)) {
                break;
            }
        }
        let m = q2.wrapping_add(1) as i64;
        Some(Magic { multiplier: if d < 0 { m.wrapping_neg() } else { m }, shift: p - 64 })
    }

    /// `n / d` (truncating) as the machine code computes it.
    #[cfg(test)]
    fn divide(self, n: i64, d: i64) -> i64 {
        let mut q = ((i128::from(n) * i128::from(self.multiplier)) >> 64) as i64;
        if d > 0 && self.multiplier < 0 {
            q = q.wrapping_add(n);
        } else if d < 0 && self.multiplier > 0 {
            q = q.wrapping_sub(n);
        }
        q >>= self.shift;
        q + i64::from(q < 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every divisor in a range and a spread of powers, on numerators at
    /// the edges of 64 bits and in between, against Rust's division.
    #[test]
    fn magic_division_is_division() {
        let mut divisors: Vec<i64> = (-300..=300).collect();
        for k in 2..63 {
            for d in [1i64 << k, (1 << k) - 1, (1 << k) + 1] {
                divisors.extend([d, -d]);
            }
        }
        divisors.extend([i64::MAX, i64::MIN, i64::MIN + 1, 7 * 7 * 7 * 7 * 7 * 7 * 7]);
        let mut numerators = vec![0, 1, -1, i64::MAX, i64::MIN, i64::MIN + 1, i64::MAX - 1];
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..2000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            numerators.push(x as i64);
            numerators.push((x as i64) >> (x % 64));
        }
        for &d in &divisors {
            let Some(magic) = Magic::of(d) else {
                assert!((-1..=1).contains(&d));
                continue;
            };
            for &n in &numerators {
                assert_eq!(magic.divide(n, d), n.wrapping_div(d), "{n} / {d}");
            }
        }
    }
}
