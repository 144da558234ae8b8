//! Tokens of herd's C litmus dialect, with line and column for error messages.

use std::fmt;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Tok {
    Ident(String),
    Int(i64),
    /// Punctuation and operators, e.g. `(`, `==`, `/\`.
    Punct(&'static str),
    Eof,
}

impl fmt::Display for Tok {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tok::Ident(s) => write!(f, "'{s}'"),
            Tok::Int(v) => write!(f, "'{v}'"),
            Tok::Punct(p) => write!(f, "'{p}'"),
            Tok::Eof => write!(f, "end of file"),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Token {
    pub tok: Tok,
    pub line: u32,
    pub col: u32,
}

/// A parse error at a position of the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    pub line: u32,
    pub col: u32,
    pub msg: String,
}

const PUNCTS: &[&str] = &[
    "/\\", "\\/", "==", "!=", "<=", ">=", "&&", "||", "<<", ">>", "->", "(", ")", "{", "}", "[",
    "]", ";", ",", "=", "+", "-", "*", "/", "%", "<", ">", "!", "~", "&", "|", "^", ":", ".", "?",
];

/// Splits `src` into tokens, dropping `(* *)`, `/* */` and `//` comments.
pub fn tokenize(src: &str) -> Result<Vec<Token>, ParseError> {
    let chars: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let (mut i, mut line, mut col) = (0usize, 1u32, 1u32);
    let advance = |i: &mut usize, line: &mut u32, col: &mut u32, chars: &[char]| {
        if chars[*i] == '\n' {
            *line += 1;
            *col = 1;
        } else {
            *col += 1;
        }
        *i += 1;
    };
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            advance(&mut i, &mut line, &mut col, &chars);
            continue;
        }
        let next = chars.get(i + 1).copied();
        // herd comment: "(*" followed by a space, newline or '*'; "(*x)" stays code.
        if c == '('
            && next == Some('*')
            && chars
                .get(i + 2)
                .is_none_or(|c| c.is_whitespace() || *c == '*' || *c == ')')
        {
            let (sl, sc) = (line, col);
            let mut depth = 0;
            loop {
                if i >= chars.len() {
                    return Err(ParseError {
                        line: sl,
                        col: sc,
                        msg: "unterminated comment '(*'".into(),
                    });
                }
                if chars[i] == '(' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    advance(&mut i, &mut line, &mut col, &chars);
                    advance(&mut i, &mut line, &mut col, &chars);
                    continue;
                }
                if chars[i] == '*' && chars.get(i + 1) == Some(&')') {
                    depth -= 1;
                    advance(&mut i, &mut line, &mut col, &chars);
                    advance(&mut i, &mut line, &mut col, &chars);
                    if depth == 0 {
                        break;
                    }
                    continue;
                }
                advance(&mut i, &mut line, &mut col, &chars);
            }
            continue;
        }
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                advance(&mut i, &mut line, &mut col, &chars);
            }
            continue;
        }
        if c == '/' && next == Some('*') {
            let (sl, sc) = (line, col);
            advance(&mut i, &mut line, &mut col, &chars);
            advance(&mut i, &mut line, &mut col, &chars);
            loop {
                if i >= chars.len() {
                    return Err(ParseError {
                        line: sl,
                        col: sc,
                        msg: "unterminated comment '/*'".into(),
                    });
                }
                if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    advance(&mut i, &mut line, &mut col, &chars);
                    advance(&mut i, &mut line, &mut col, &chars);
                    break;
                }
                advance(&mut i, &mut line, &mut col, &chars);
            }
            continue;
        }
        let (tl, tc) = (line, col);
        if c.is_ascii_alphabetic() || c == '_' {
            let mut s = String::new();
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                s.push(chars[i]);
                advance(&mut i, &mut line, &mut col, &chars);
            }
            out.push(Token {
                tok: Tok::Ident(s),
                line: tl,
                col: tc,
            });
            continue;
        }
        if c.is_ascii_digit() {
            let mut s = String::new();
            while i < chars.len() && (chars[i].is_ascii_alphanumeric()) {
                s.push(chars[i]);
                advance(&mut i, &mut line, &mut col, &chars);
            }
            let v = if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
                i64::from_str_radix(h, 16).ok()
            } else {
                s.parse::<i64>().ok()
            };
            match v {
                Some(v) => out.push(Token {
                    tok: Tok::Int(v),
                    line: tl,
                    col: tc,
                }),
                None => {
                    return Err(ParseError {
                        line: tl,
                        col: tc,
                        msg: format!("expected a number, found '{s}'"),
                    })
                }
            }
            continue;
        }
        let rest: String = chars[i..chars.len().min(i + 2)].iter().collect();
        match PUNCTS.iter().find(|p| rest.starts_with(**p)) {
            Some(p) => {
                for _ in 0..p.len() {
                    advance(&mut i, &mut line, &mut col, &chars);
                }
                out.push(Token {
                    tok: Tok::Punct(p),
                    line: tl,
                    col: tc,
                });
            }
            None => {
                return Err(ParseError {
                    line: tl,
                    col: tc,
                    msg: format!("unexpected character '{c}'"),
                })
            }
        }
    }
    out.push(Token {
        tok: Tok::Eof,
        line,
        col,
    });
    Ok(out)
}
