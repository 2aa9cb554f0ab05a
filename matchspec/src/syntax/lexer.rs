//! The adapter between logos and lalrpop: tokens with spans, one term at a
//! time.
//!
//! A stream of terms is split at `.` tokens. A `.` ends a term only when
//! followed by white space, a `%` comment or the end of the input (as in
//! `erl_scan`); anything else is an error. Splitting first lets the parser
//! report one term's error and carry on with the next.

use logos::Logos;

use super::Syntax;
use super::build::SyntaxError;
use super::error::{ParseErrorKind, Span};
use super::scan::{Number, scan_number};
use super::token::Token;

/// The tokens of a text as `syntax` reads them: logos's, with each number
/// read by [`scan_number`] from the digit logos found.
pub(crate) struct Tokens<'input> {
    source: &'input str,
    lexer: logos::Lexer<'input, Token<'input>>,
    syntax: Syntax,
}

impl<'input> Tokens<'input> {
    pub(crate) fn new(source: &'input str, syntax: Syntax) -> Tokens<'input> {
        Tokens { source, lexer: Token::lexer(source), syntax }
    }

    /// The byte range of the last token.
    pub(crate) fn span(&self) -> std::ops::Range<usize> {
        self.lexer.span()
    }
}

impl<'input> Iterator for Tokens<'input> {
    type Item = Result<Token<'input>, ParseErrorKind>;

    fn next(&mut self) -> Option<Self::Item> {
        let token = self.lexer.next()?;
        let Ok(Token::Digit) = token else { return Some(token) };
        let start = self.lexer.span().start;
        let (number, len) = scan_number(&self.source[start..], self.syntax.release());
        // logos took the first digit; the number's other bytes are its too.
        self.lexer.bump(len.saturating_sub(1));
        Some(number.map(|n| match n {
            Number::Int(i) => Token::Int(i),
            Number::Float(f) => Token::Float(f),
        }))
    }
}

/// A token and its byte range, as lalrpop wants it.
pub(crate) type Spanned<'input> = (usize, Token<'input>, usize);

/// The tokens of one term and where it ended.
pub(crate) struct TermTokens<'input> {
    pub(crate) tokens: Vec<Spanned<'input>>,
    /// The span of the terminating `.`, or an empty span at the end of the input.
    pub(crate) end: Span,
    /// Did a `.` end the term?
    pub(crate) dotted: bool,
}

/// Splits source text into the token lists of its terms.
pub(crate) struct Splitter<'input> {
    source: &'input str,
    lexer: Tokens<'input>,
}

impl<'input> Splitter<'input> {
    pub(crate) fn new(source: &'input str, syntax: Syntax) -> Splitter<'input> {
        Splitter { source, lexer: Tokens::new(source, syntax) }
    }

    /// Where the text of the term [`next_term`](Splitter::next_term) gave
    /// last ends: past its `.`, or at the end of the source.
    pub(crate) fn offset(&self) -> usize {
        let span = self.lexer.span();
        if self.source.get(span.clone()) == Some(".") { span.end } else { self.source.len() }
    }

    /// The tokens of the next term, `None` when only white space is left.
    /// After an error the rest of that term is skipped.
    pub(crate) fn next_term(&mut self) -> Option<Result<TermTokens<'input>, SyntaxError>> {
        let mut tokens = Vec::new();
        let mut error = None;
        loop {
            let Some(token) = self.lexer.next() else {
                let end = Span::new(self.source.len(), self.source.len());
                if tokens.is_empty() && error.is_none() {
                    return None;
                }
                return Some(match error {
                    Some(e) => Err(e),
                    None => Ok(TermTokens { tokens, end, dotted: false }),
                });
            };
            let span = self.lexer.span();
            match token {
                Ok(Token::Dot) => {
                    if !ends_form(&self.source[span.end..]) {
                        error.get_or_insert(SyntaxError::new(
                            ParseErrorKind::BadDot,
                            span.start,
                            span.end,
                        ));
                        continue;
                    }
                    let end = Span::new(span.start, span.end);
                    return Some(match error {
                        Some(e) => Err(e),
                        None => Ok(TermTokens { tokens, end, dotted: true }),
                    });
                }
                Ok(token) => {
                    if error.is_none() {
                        tokens.push((span.start, token, span.end));
                    }
                }
                Err(kind) => {
                    error.get_or_insert(SyntaxError::new(kind, span.start, span.end));
                }
            }
        }
    }
}

/// Does a `.` followed by `rest` end a term or form (white space, a comment
/// or nothing next, as in `erl_scan`)?
pub(crate) fn ends_form(rest: &str) -> bool {
    match rest.chars().next() {
        None | Some('%') => true,
        Some(c) => u32::from(c) <= 0x20 || (0x80..=0xa0).contains(&u32::from(c)),
    }
}
