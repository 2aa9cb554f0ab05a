//! Binary literals: evaluating bit-syntax segments such as `1:3`,
//! `"é"/utf8` or `2.5/float-little` into bits.

use num_bigint::BigInt;

use super::build::SyntaxError;
use super::error::{ParseErrorKind, Span};
use super::token::IntLit;
use crate::term::Atom;

/// The largest segment, in bits, a literal may ask for (so that `<<1:4294967295>>`
/// is an error rather than a gigabyte).
const MAX_SEGMENT_BITS: u64 = 1 << 24;

/// One segment as written: `Value[:Size][/Type-Specifiers]`.
#[derive(Clone, Debug)]
pub(crate) struct Segment {
    pub(crate) value: SegValue,
    pub(crate) size: Option<IntLit>,
    pub(crate) specs: Vec<(Atom, Option<IntLit>)>,
    pub(crate) span: Span,
}

/// The value of a segment.
#[derive(Clone, Debug)]
pub(crate) enum SegValue {
    Int(BigInt),
    Float(f64),
    Str(Vec<u32>),
    Bits(BitWriter),
}

/// Bits appended most significant first.
#[derive(Clone, Debug, Default)]
pub(crate) struct BitWriter {
    bytes: Vec<u8>,
    bit_len: u64,
}

impl BitWriter {
    /// The bits of an existing bitstring: `bytes` holds `bit_len` bits, most
    /// significant first.
    pub(crate) fn from_bits(bytes: &[u8], bit_len: u64) -> BitWriter {
        BitWriter { bytes: bytes.to_vec(), bit_len }
    }

    pub(crate) fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    pub(crate) fn bit_len(&self) -> u64 {
        self.bit_len
    }

    fn push_bit(&mut self, bit: bool) {
        if self.bit_len.is_multiple_of(8) {
            self.bytes.push(0);
        }
        if bit && let Some(last) = self.bytes.last_mut() {
            *last |= 0x80 >> (self.bit_len % 8);
        }
        self.bit_len += 1;
    }

    fn push_byte(&mut self, byte: u8) {
        if self.bit_len.is_multiple_of(8) {
            self.bytes.push(byte);
            self.bit_len += 8;
        } else {
            for i in (0..8).rev() {
                self.push_bit(byte >> i & 1 == 1);
            }
        }
    }

    fn push_bytes(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.push_byte(b);
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Type {
    Integer,
    Float,
    /// `binary` or `bytes` (unit 8).
    Bytes,
    /// `bitstring` or `bits` (unit 1).
    Bits,
    Utf8,
    Utf16,
    Utf32,
}

struct Specs {
    ty: Type,
    little: bool,
    unit: Option<u64>,
}

fn bad(why: impl Into<String>, span: Span) -> SyntaxError {
    SyntaxError { kind: ParseErrorKind::BadSegment(why.into()), span }
}

fn small(value: &IntLit) -> Option<u64> {
    match value {
        IntLit::Small(v) => u64::try_from(*v).ok(),
        IntLit::Big(_) => None,
    }
}

fn parse_specs(segment: &Segment) -> Result<Specs, SyntaxError> {
    let mut specs = Specs { ty: Type::Integer, little: false, unit: None };
    for (name, arg) in &segment.specs {
        match (name.name(), arg) {
            ("integer", None) => specs.ty = Type::Integer,
            ("float", None) => specs.ty = Type::Float,
            ("binary" | "bytes", None) => specs.ty = Type::Bytes,
            ("bitstring" | "bits", None) => specs.ty = Type::Bits,
            ("utf8", None) => specs.ty = Type::Utf8,
            ("utf16", None) => specs.ty = Type::Utf16,
            ("utf32", None) => specs.ty = Type::Utf32,
            ("signed" | "unsigned" | "big", None) => {}
            ("little", None) => specs.little = true,
            // Native order is the machine's; every machine we run on is little endian.
            ("native", None) => specs.little = cfg!(target_endian = "little"),
            ("unit", Some(n)) => match small(n) {
                Some(n @ 1..=256) => specs.unit = Some(n),
                _ => return Err(bad("unit must be 1..256", segment.span)),
            },
            (other, _) => {
                return Err(bad(format!("unknown type specifier `{other}`"), segment.span));
            }
        }
    }
    Ok(specs)
}

/// Appends the bits of `segment` to `out`.
pub(crate) fn write_segment(out: &mut BitWriter, segment: &Segment) -> Result<(), SyntaxError> {
    let specs = parse_specs(segment)?;
    let span = segment.span;
    let size = match &segment.size {
        None => None,
        Some(s) => Some(small(s).ok_or_else(|| bad("size must be a non-negative integer", span))?),
    };
    match &segment.value {
        SegValue::Str(_) if matches!(specs.ty, Type::Bytes | Type::Bits) => {
            Err(bad("binary segment needs a binary value", span))
        }
        SegValue::Str(chars) => {
            for &c in chars {
                let one = Segment { value: SegValue::Int(BigInt::from(c)), ..segment.clone() };
                write_segment(out, &one)?;
            }
            Ok(())
        }
        SegValue::Bits(bits) => {
            let unit = match specs.ty {
                Type::Bytes => specs.unit.unwrap_or(8),
                Type::Bits => specs.unit.unwrap_or(1),
                _ => return Err(bad("a binary value needs the /binary or /bits type", span)),
            };
            let take = match size {
                Some(n) => n.saturating_mul(unit),
                None => bits.bit_len(),
            };
            if take > bits.bit_len() || (size.is_none() && take % unit != 0) {
                return Err(bad("binary value does not fit the segment size", span));
            }
            for i in 0..take {
                let byte = bits.bytes()[(i / 8) as usize];
                out.push_bit(byte & (0x80 >> (i % 8)) != 0);
            }
            Ok(())
        }
        SegValue::Int(v) => match specs.ty {
            Type::Integer => {
                let bits = size.unwrap_or(8).saturating_mul(specs.unit.unwrap_or(1));
                write_integer(out, v, bits, specs.little, span)
            }
            Type::Float => write_float(out, int_to_f64(v), size, specs.unit, specs.little, span),
            Type::Utf8 | Type::Utf16 | Type::Utf32 => {
                if size.is_some() || specs.unit.is_some() {
                    return Err(bad("utf segments take no size or unit", span));
                }
                let c = u32::try_from(v)
                    .ok()
                    .and_then(char::from_u32)
                    .ok_or_else(|| bad("not a Unicode code point", span))?;
                write_utf(out, c, specs.ty, specs.little);
                Ok(())
            }
            Type::Bytes | Type::Bits => Err(bad("binary segment needs a binary value", span)),
        },
        SegValue::Float(f) => match specs.ty {
            Type::Float => write_float(out, *f, size, specs.unit, specs.little, span),
            _ => Err(bad("a float needs the /float type", span)),
        },
    }
}

fn int_to_f64(v: &BigInt) -> f64 {
    num_traits::ToPrimitive::to_f64(v).unwrap_or(f64::INFINITY)
}

fn write_integer(
    out: &mut BitWriter,
    v: &BigInt,
    bits: u64,
    little: bool,
    span: Span,
) -> Result<(), SyntaxError> {
    if bits > MAX_SEGMENT_BITS {
        return Err(bad("segment too large", span));
    }
    if little {
        if !bits.is_multiple_of(8) {
            return Err(bad("little-endian segments must be a whole number of bytes", span));
        }
        for byte in 0..bits / 8 {
            let mut b = 0u8;
            for i in 0..8 {
                b |= u8::from(v.bit(byte * 8 + i)) << i;
            }
            out.push_byte(b);
        }
    } else {
        for i in (0..bits).rev() {
            out.push_bit(v.bit(i));
        }
    }
    Ok(())
}

fn write_float(
    out: &mut BitWriter,
    f: f64,
    size: Option<u64>,
    unit: Option<u64>,
    little: bool,
    span: Span,
) -> Result<(), SyntaxError> {
    let bits = size.unwrap_or(64).saturating_mul(unit.unwrap_or(1));
    let bytes: Vec<u8> = match bits {
        64 if f.is_finite() => f.to_be_bytes().to_vec(),
        32 if (f as f32).is_finite() => (f as f32).to_be_bytes().to_vec(),
        16 if half::f16::from_f64(f).is_finite() => half::f16::from_f64(f).to_be_bytes().to_vec(),
        64 | 32 | 16 => return Err(bad("float out of range", span)),
        _ => return Err(bad("float segments are 16, 32 or 64 bits", span)),
    };
    if little {
        out.push_bytes(&bytes.iter().rev().copied().collect::<Vec<u8>>());
    } else {
        out.push_bytes(&bytes);
    }
    Ok(())
}

fn write_utf(out: &mut BitWriter, c: char, ty: Type, little: bool) {
    match ty {
        Type::Utf8 => {
            let mut buf = [0u8; 4];
            out.push_bytes(c.encode_utf8(&mut buf).as_bytes());
        }
        Type::Utf16 => {
            let mut buf = [0u16; 2];
            for unit in c.encode_utf16(&mut buf) {
                let bytes = if little { unit.to_le_bytes() } else { unit.to_be_bytes() };
                out.push_bytes(&bytes);
            }
        }
        _ => {
            let v = u32::from(c);
            out.push_bytes(&if little { v.to_le_bytes() } else { v.to_be_bytes() });
        }
    }
}
