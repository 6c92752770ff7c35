//! Four lanes of doubles and floats ([`D`], [`F`]) whose operators are the
//! scalar IEEE operations lane by lane, written so that the compiler emits
//! vector instructions (AVX2 where [`super::simd`] is entered through its
//! `target_feature` wrapper). Each lane computes exactly what the scalar
//! code computes: an add is an add, a multiply a multiply, never fused
//! (Rust does not contract), a comparison a mask.

use std::array::from_fn;
use std::ops::{Add, Div, Mul, Neg, Sub};

/// Lanes per vector.
pub const L: usize = 4;

/// Four doubles.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct D(pub [f64; L]);

/// Four floats.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct F(pub [f32; L]);

/// A lane mask (the result of a comparison).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct M(pub [bool; L]);

impl M {
    #[inline(always)]
    pub fn and(self, o: M) -> M {
        M(from_fn(|i| self.0[i] && o.0[i]))
    }
}

macro_rules! lanes {
    ($v:ident, $t:ty) => {
        impl $v {
            #[inline(always)]
            pub fn splat(x: $t) -> Self {
                $v([x; L])
            }
            #[inline(always)]
            pub fn map(self, f: impl Fn($t) -> $t) -> Self {
                $v(from_fn(|i| f(self.0[i])))
            }
            #[inline(always)]
            pub fn abs(self) -> Self {
                self.map(<$t>::abs)
            }
            #[inline(always)]
            pub fn lt(self, o: impl Into<$v>) -> M {
                let o = o.into();
                M(from_fn(|i| self.0[i] < o.0[i]))
            }
            #[inline(always)]
            pub fn gt(self, o: impl Into<$v>) -> M {
                let o = o.into();
                M(from_fn(|i| self.0[i] > o.0[i]))
            }
            #[inline(always)]
            pub fn eq(self, o: impl Into<$v>) -> M {
                let o = o.into();
                M(from_fn(|i| self.0[i] == o.0[i]))
            }
            /// `a` where the mask is set, else `b`.
            #[inline(always)]
            pub fn select(m: M, a: Self, b: Self) -> Self {
                $v(from_fn(|i| if m.0[i] { a.0[i] } else { b.0[i] }))
            }
        }
        impl From<$t> for $v {
            #[inline(always)]
            fn from(x: $t) -> Self {
                $v::splat(x)
            }
        }
        impl Neg for $v {
            type Output = $v;
            #[inline(always)]
            fn neg(self) -> $v {
                self.map(|x| -x)
            }
        }
        lanes!(@op $v, $t, Add, add, +);
        lanes!(@op $v, $t, Sub, sub, -);
        lanes!(@op $v, $t, Mul, mul, *);
        lanes!(@op $v, $t, Div, div, /);
    };
    (@op $v:ident, $t:ty, $tr:ident, $f:ident, $op:tt) => {
        impl $tr for $v {
            type Output = $v;
            #[inline(always)]
            fn $f(self, o: $v) -> $v {
                $v(from_fn(|i| self.0[i] $op o.0[i]))
            }
        }
        impl $tr<$t> for $v {
            type Output = $v;
            #[inline(always)]
            fn $f(self, o: $t) -> $v {
                $v(from_fn(|i| self.0[i] $op o))
            }
        }
        impl $tr<$v> for $t {
            type Output = $v;
            #[inline(always)]
            fn $f(self, o: $v) -> $v {
                $v(from_fn(|i| self $op o.0[i]))
            }
        }
    };
}

lanes!(D, f64);
lanes!(F, f32);

impl D {
    #[inline(always)]
    pub fn floor(self) -> D {
        self.map(f64::floor)
    }
    #[inline(always)]
    pub fn bits(self) -> [u64; L] {
        self.0.map(f64::to_bits)
    }
    #[inline(always)]
    pub fn from_bits(b: [u64; L]) -> D {
        D(b.map(f64::from_bits))
    }
    /// Rounded to float, lane by lane (`as f32`).
    #[inline(always)]
    pub fn to_f32(self) -> F {
        F(self.0.map(|x| x as f32))
    }
}

impl F {
    /// Widened to double (exact).
    #[inline(always)]
    pub fn to_f64(self) -> D {
        D(self.0.map(f64::from))
    }
}
