//! Recursive-descent parser for herd7's C litmus format.

use crate::ast::*;
use crate::lexer::{tokenize, ParseError, Tok, Token};
use c11check_model::{MemOrder, RmwOp, Value};

/// Parses a litmus test; errors carry line and column.
pub fn parse(src: &str) -> Result<LitmusTest, ParseError> {
    // The header line ("C name") is taken whole: test names contain '+', '-', '.'.
    let mut lines = src.lines().enumerate();
    let (hline, header) = loop {
        match lines.next() {
            Some((_, l)) if l.trim().is_empty() => continue,
            Some((i, l)) => break (i, l),
            None => {
                return Err(ParseError {
                    line: 1,
                    col: 1,
                    msg: "expected a header 'C <name>', found an empty file".into(),
                })
            }
        }
    };
    let mut words = header.split_whitespace();
    let arch = words.next().unwrap_or("");
    if arch != "C" {
        let col = header.find(arch).unwrap_or(0) as u32 + 1;
        return Err(ParseError {
            line: hline as u32 + 1,
            col,
            msg: format!(
                "expected the architecture 'C', found '{arch}' (only C litmus tests are supported)"
            ),
        });
    }
    let name: String = words.collect::<Vec<_>>().join(" ");
    if name.is_empty() {
        return Err(ParseError {
            line: hline as u32 + 1,
            col: header.len() as u32 + 1,
            msg: "expected a test name after 'C', found end of line".into(),
        });
    }
    // Blank out the header so token positions stay those of the file.
    let body: String = src
        .lines()
        .enumerate()
        .map(|(i, l)| {
            if i == hline {
                " ".repeat(l.len())
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    let toks = tokenize(&body)?;
    let mut p = Parser {
        toks,
        pos: 0,
        test: LitmusTest {
            name,
            locations: Vec::new(),
            init: Vec::new(),
            threads: Vec::new(),
            condition: Condition {
                quantifier: Quantifier::Exists,
                prop: Prop::True,
            },
            extra_keys: Vec::new(),
            refcount_order_observable: false,
        },
        locals: Vec::new(),
        params: Vec::new(),
        arrays: Vec::new(),
        accesses: Vec::new(),
        sc_fence: false,
    };
    p.file()?;
    p.test.refcount_order_observable = p.refcount_order_observable();
    Ok(p.test)
}

struct Parser {
    toks: Vec<Token>,
    pos: usize,
    test: LitmusTest,
    /// Locals of the thread being parsed.
    locals: Vec<String>,
    /// Parameter (location) names of the thread being parsed.
    params: Vec<String>,
    /// Arrays declared in the init block: name and length.
    arrays: Vec<(String, u32)>,
    /// Each access to a location: its base, and whether it is a
    /// reference-count update.
    accesses: Vec<(u32, bool)>,
    /// Whether some thread has a SeqCst fence.
    sc_fence: bool,
}

const TYPE_WORDS: &[&str] = &[
    "int",
    "long",
    "short",
    "char",
    "unsigned",
    "signed",
    "volatile",
    "const",
    "atomic_int",
    "atomic_long",
    "atomic_uint",
    "atomic_bool",
    "atomic_intptr_t",
    "intptr_t",
    "uintptr_t",
    "size_t",
    "_Atomic",
    "bool",
    "_Bool",
    "int32_t",
    "int64_t",
    "uint32_t",
    "uint64_t",
];

impl Parser {
    fn peek(&self) -> &Tok {
        &self.toks[self.pos].tok
    }
    fn peek_at(&self, k: usize) -> &Tok {
        &self.toks[(self.pos + k).min(self.toks.len() - 1)].tok
    }
    fn here(&self) -> (u32, u32) {
        let t = &self.toks[self.pos];
        (t.line, t.col)
    }
    fn err<T>(&self, expected: &str) -> Result<T, ParseError> {
        let (line, col) = self.here();
        Err(ParseError {
            line,
            col,
            msg: format!("expected {expected}, found {}", self.peek()),
        })
    }
    fn unsupported<T>(&self, what: &str) -> Result<T, ParseError> {
        let (line, col) = self.here();
        Err(ParseError {
            line,
            col,
            msg: format!("unsupported construct: {what}"),
        })
    }
    fn bump(&mut self) -> Tok {
        let t = self.toks[self.pos].tok.clone();
        if self.pos < self.toks.len() - 1 {
            self.pos += 1;
        }
        t
    }
    fn is_punct(&self, p: &str) -> bool {
        matches!(self.peek(), Tok::Punct(q) if *q == p)
    }
    fn is_ident(&self, s: &str) -> bool {
        matches!(self.peek(), Tok::Ident(q) if q == s)
    }
    fn eat_punct(&mut self, p: &str) -> bool {
        if self.is_punct(p) {
            self.bump();
            true
        } else {
            false
        }
    }
    fn expect_punct(&mut self, p: &str) -> Result<(), ParseError> {
        if self.eat_punct(p) {
            Ok(())
        } else {
            self.err(&format!("'{p}'"))
        }
    }
    fn ident(&mut self, what: &str) -> Result<String, ParseError> {
        match self.peek().clone() {
            Tok::Ident(s) => {
                self.bump();
                Ok(s)
            }
            _ => self.err(what),
        }
    }
    fn int(&mut self) -> Result<Value, ParseError> {
        let neg = self.eat_punct("-");
        match *self.peek() {
            Tok::Int(v) => {
                self.bump();
                Ok(if neg { -v } else { v })
            }
            _ => self.err("an integer"),
        }
    }

    fn loc_index(&mut self, name: &str) -> u32 {
        match self.test.locations.iter().position(|l| l == name) {
            Some(i) => i as u32,
            None => {
                self.test.locations.push(name.to_string());
                self.test.init.push(0);
                self.test.locations.len() as u32 - 1
            }
        }
    }

    fn file(&mut self) -> Result<(), ParseError> {
        if let Tok::Ident(_) = self.peek() {
            // herd allows a free-form doc string line before the init block; we do not.
        }
        self.init_block()?;
        while let Tok::Ident(s) = self.peek().clone() {
            if s.starts_with('P') && s[1..].chars().all(|c| c.is_ascii_digit()) && s.len() > 1 {
                let n: usize = s[1..].parse().unwrap_or(usize::MAX);
                if n != self.test.threads.len() {
                    return self.err(&format!("thread 'P{}'", self.test.threads.len()));
                }
                self.bump();
                self.thread()?;
            } else {
                break;
            }
        }
        if self.test.threads.is_empty() {
            return self.err("a thread 'P0 (...) { ... }'");
        }
        if self.is_ident("locations") {
            self.bump();
            self.expect_punct("[")?;
            while !self.eat_punct("]") {
                let k = self.key()?;
                self.test.extra_keys.push(k);
                if !self.eat_punct(";") && !self.is_punct("]") {
                    return self.err("';' or ']'");
                }
            }
        }
        let quantifier = if self.eat_punct("~") {
            if !self.is_ident("exists") {
                return self.err("'exists' after '~'");
            }
            self.bump();
            Quantifier::NotExists
        } else if self.is_ident("exists") {
            self.bump();
            Quantifier::Exists
        } else if self.is_ident("forall") {
            self.bump();
            Quantifier::Forall
        } else if self.is_ident("filter") {
            return self.unsupported("'filter' clauses");
        } else {
            return self.err("a final condition ('exists', '~exists' or 'forall')");
        };
        let prop = self.prop()?;
        self.test.condition = Condition { quantifier, prop };
        self.eat_punct(";");
        if *self.peek() != Tok::Eof {
            return self.err("end of file after the final condition");
        }
        Ok(())
    }

    fn init_block(&mut self) -> Result<(), ParseError> {
        self.expect_punct("{")?;
        loop {
            if self.eat_punct("}") {
                return Ok(());
            }
            if self.eat_punct(";") {
                continue;
            }
            if let Tok::Int(_) = self.peek() {
                return self.unsupported("register initialisation in the init block");
            }
            let name = if self.eat_punct("[") {
                let n = self.ident("a location name")?;
                self.expect_punct("]")?;
                n
            } else {
                let mut name = self.ident("a location name or '}'")?;
                while TYPE_WORDS.contains(&name.as_str()) {
                    self.eat_punct("*");
                    name = self.ident("a location name")?;
                }
                if self.is_punct(":") {
                    return self.unsupported("register initialisation in the init block");
                }
                name
            };
            if self.eat_punct("[") {
                let len = self.int()?;
                if !(1..=64).contains(&len) {
                    return self.err("an array length from 1 to 64");
                }
                self.expect_punct("]")?;
                let mut vals = vec![0; len as usize];
                if self.eat_punct("=") {
                    self.expect_punct("{")?;
                    for (i, v) in vals.iter_mut().enumerate() {
                        if i > 0 {
                            self.expect_punct(",")?;
                        }
                        *v = self.int()?;
                    }
                    self.expect_punct("}")?;
                }
                if self.test.locations.contains(&name) {
                    return self.err(&format!("a fresh name (array '{name}' is declared twice)"));
                }
                for (i, v) in vals.iter().enumerate() {
                    let elem = if i == 0 {
                        name.clone()
                    } else {
                        format!("{name}[{i}]")
                    };
                    let l = self.loc_index(&elem);
                    self.test.init[l as usize] = *v;
                }
                self.arrays.push((name, len as u32));
                if !self.eat_punct(";") && !self.is_punct("}") {
                    return self.err("';' or '}'");
                }
                continue;
            }
            let v = if self.eat_punct("=") { self.int()? } else { 0 };
            let i = self.loc_index(&name);
            self.test.init[i as usize] = v;
            if !self.eat_punct(";") && !self.is_punct("}") {
                return self.err("';' or '}'");
            }
        }
    }

    fn thread(&mut self) -> Result<(), ParseError> {
        self.locals.clear();
        self.params.clear();
        self.expect_punct("(")?;
        if !self.eat_punct(")") {
            loop {
                let mut saw_type = false;
                while let Tok::Ident(w) = self.peek().clone() {
                    if TYPE_WORDS.contains(&w.as_str()) {
                        saw_type = true;
                        self.bump();
                    } else {
                        break;
                    }
                }
                if !saw_type {
                    return self.err("a parameter type such as 'atomic_int*'");
                }
                if !self.eat_punct("*") {
                    return self.err("'*' (parameters are pointers to shared locations)");
                }
                let name = self.ident("a parameter name")?;
                self.loc_index(&name);
                self.params.push(name);
                if self.eat_punct(")") {
                    break;
                }
                self.expect_punct(",")?;
            }
        }
        let body = self.block()?;
        self.test.threads.push(Thread {
            locals: std::mem::take(&mut self.locals),
            body,
        });
        Ok(())
    }

    fn block(&mut self) -> Result<Vec<Stmt>, ParseError> {
        self.expect_punct("{")?;
        let mut out = Vec::new();
        while !self.eat_punct("}") {
            if *self.peek() == Tok::Eof {
                return self.err("'}'");
            }
            self.stmt(&mut out)?;
        }
        Ok(out)
    }

    fn stmt_or_block(&mut self) -> Result<Vec<Stmt>, ParseError> {
        if self.is_punct("{") {
            self.block()
        } else {
            let mut out = Vec::new();
            self.stmt(&mut out)?;
            Ok(out)
        }
    }

    fn local(&mut self, name: &str) -> usize {
        match self.locals.iter().position(|l| l == name) {
            Some(i) => i,
            None => {
                self.locals.push(name.to_string());
                self.locals.len() - 1
            }
        }
    }

    fn param(&self, name: &str) -> Option<u32> {
        if self.params.iter().any(|p| p == name) {
            self.test
                .locations
                .iter()
                .position(|l| l == name)
                .map(|i| i as u32)
        } else {
            None
        }
    }

    fn stmt(&mut self, out: &mut Vec<Stmt>) -> Result<(), ParseError> {
        if self.eat_punct(";") {
            return Ok(());
        }
        if self.is_punct("{") {
            let b = self.block()?;
            out.extend(b);
            return Ok(());
        }
        if self.eat_punct("*") {
            let name = self.ident("a location after '*'")?;
            let Some(loc) = self.param(&name) else {
                return self.unsupported(&format!(
                    "'*{name}': '{name}' is not a parameter of this thread"
                ));
            };
            self.expect_punct("=")?;
            let e = self.expr()?;
            self.expect_punct(";")?;
            self.accesses.push((loc, false));
            out.push(Stmt::StoreNa(loc, e));
            return Ok(());
        }
        let Tok::Ident(word) = self.peek().clone() else {
            return self.err("a statement");
        };
        match word.as_str() {
            "if" => {
                self.bump();
                self.expect_punct("(")?;
                let c = self.expr()?;
                self.expect_punct(")")?;
                let then = self.stmt_or_block()?;
                let els = if self.is_ident("else") {
                    self.bump();
                    self.stmt_or_block()?
                } else {
                    Vec::new()
                };
                out.push(Stmt::If(c, then, els));
            }
            "while" => {
                self.bump();
                self.expect_punct("(")?;
                let c = self.expr()?;
                self.expect_punct(")")?;
                let body = self.stmt_or_block()?;
                out.push(Stmt::While(c, body));
            }
            "for" | "do" | "goto" | "switch" | "return" | "break" | "continue" => {
                return self.unsupported(&format!("'{word}' statements"));
            }
            w if TYPE_WORDS.contains(&w) => {
                while let Tok::Ident(w) = self.peek().clone() {
                    if TYPE_WORDS.contains(&w.as_str()) {
                        self.bump();
                    } else {
                        break;
                    }
                }
                if self.is_punct("*") {
                    return self.unsupported("local pointer variables");
                }
                loop {
                    let name = self.ident("a variable name")?;
                    if self.is_punct("[") {
                        return self.unsupported("arrays");
                    }
                    let slot = self.local(&name);
                    let e = if self.eat_punct("=") {
                        self.expr()?
                    } else {
                        Expr::Int(0)
                    };
                    out.push(Stmt::Assign(slot, e));
                    if !self.eat_punct(",") {
                        break;
                    }
                }
                self.expect_punct(";")?;
            }
            _ => {
                if matches!(self.peek_at(1), Tok::Punct("=")) {
                    let name = self.ident("a variable")?;
                    if self.param(&name).is_some() {
                        return self.unsupported(&format!(
                            "assigning to the pointer '{name}' (write '*{name} = ...')"
                        ));
                    }
                    let slot = self.local(&name);
                    self.bump();
                    let e = self.expr()?;
                    self.expect_punct(";")?;
                    out.push(Stmt::Assign(slot, e));
                } else {
                    let e = self.expr()?;
                    self.expect_punct(";")?;
                    out.push(Stmt::Expr(e));
                }
            }
        }
        Ok(())
    }

    fn expr(&mut self) -> Result<Expr, ParseError> {
        self.binary(0)
    }

    fn binary(&mut self, level: usize) -> Result<Expr, ParseError> {
        const LEVELS: &[&[(&str, BinOp)]] = &[
            &[("||", BinOp::Or)],
            &[("&&", BinOp::And)],
            &[("|", BinOp::BitOr)],
            &[("^", BinOp::BitXor)],
            &[("&", BinOp::BitAnd)],
            &[("==", BinOp::Eq), ("!=", BinOp::Ne)],
            &[
                ("<=", BinOp::Le),
                (">=", BinOp::Ge),
                ("<", BinOp::Lt),
                (">", BinOp::Gt),
            ],
            &[("<<", BinOp::Shl), (">>", BinOp::Shr)],
            &[("+", BinOp::Add), ("-", BinOp::Sub)],
            &[("*", BinOp::Mul), ("/", BinOp::Div), ("%", BinOp::Rem)],
        ];
        if level == LEVELS.len() {
            return self.unary();
        }
        let mut lhs = self.binary(level + 1)?;
        'outer: loop {
            for (p, op) in LEVELS[level] {
                if self.is_punct(p) {
                    self.bump();
                    let rhs = self.binary(level + 1)?;
                    lhs = Expr::Binary(*op, Box::new(lhs), Box::new(rhs));
                    continue 'outer;
                }
            }
            return Ok(lhs);
        }
    }

    fn unary(&mut self) -> Result<Expr, ParseError> {
        if self.eat_punct("-") {
            return Ok(Expr::Unary(UnOp::Neg, Box::new(self.unary()?)));
        }
        if self.eat_punct("!") {
            return Ok(Expr::Unary(UnOp::Not, Box::new(self.unary()?)));
        }
        if self.eat_punct("~") {
            return Ok(Expr::Unary(UnOp::BitNot, Box::new(self.unary()?)));
        }
        if self.eat_punct("+") {
            return self.unary();
        }
        if self.is_punct("&") {
            return self.unsupported("taking addresses with '&'");
        }
        if self.eat_punct("*") {
            let name = self.ident("a location after '*'")?;
            return match self.param(&name) {
                Some(loc) => {
                    self.accesses.push((loc, false));
                    Ok(Expr::LoadNa(loc))
                }
                None => self.unsupported(&format!(
                    "'*{name}': '{name}' is not a parameter of this thread"
                )),
            };
        }
        self.primary()
    }

    fn primary(&mut self) -> Result<Expr, ParseError> {
        match self.peek().clone() {
            Tok::Int(v) => {
                self.bump();
                Ok(Expr::Int(v))
            }
            Tok::Punct("(") => {
                self.bump();
                let e = self.expr()?;
                self.expect_punct(")")?;
                Ok(e)
            }
            Tok::Ident(name) => {
                if matches!(self.peek_at(1), Tok::Punct("(")) {
                    return self.call();
                }
                match name.as_str() {
                    "true" => {
                        self.bump();
                        return Ok(Expr::Int(1));
                    }
                    "false" | "NULL" => {
                        self.bump();
                        return Ok(Expr::Int(0));
                    }
                    _ => {}
                }
                if self.param(&name).is_some() {
                    return self.unsupported(&format!(
                        "using the pointer '{name}' as a value (pointer arithmetic)"
                    ));
                }
                if !self.locals.contains(&name) {
                    let (line, col) = self.here();
                    return Err(ParseError {
                        line,
                        col,
                        msg: format!("unknown variable '{name}'"),
                    });
                }
                self.bump();
                Ok(Expr::Local(self.local(&name)))
            }
            _ => self.err("an expression"),
        }
    }

    fn loc_arg(&mut self) -> Result<LocRef, ParseError> {
        if self.is_punct("&") {
            return self.unsupported("taking addresses with '&'");
        }
        let name = self.ident("a location argument")?;
        let Some(base) = self.param(&name) else {
            return self.unsupported(&format!("'{name}' is not a parameter of this thread"));
        };
        let len = self
            .arrays
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, l)| *l)
            .unwrap_or(1);
        let offset = if self.eat_punct("+") {
            if len == 1 {
                return self.unsupported(&format!(
                    "pointer arithmetic on '{name}', which is not an array"
                ));
            }
            Some(Box::new(self.binary(9)?))
        } else {
            if self.is_punct("-") || self.is_punct("[") {
                return self.unsupported("pointer arithmetic other than 'array + offset'");
            }
            None
        };
        Ok(LocRef { base, len, offset })
    }

    fn order_arg(&mut self) -> Result<MemOrder, ParseError> {
        let name = self.ident("a memory order")?;
        Ok(match name.as_str() {
            "memory_order_relaxed" => MemOrder::Relaxed,
            "memory_order_consume" | "memory_order_acquire" => MemOrder::Acquire,
            "memory_order_release" => MemOrder::Release,
            "memory_order_acq_rel" => MemOrder::AcqRel,
            "memory_order_seq_cst" => MemOrder::SeqCst,
            _ => {
                self.pos -= 1;
                return self.err("a memory order such as 'memory_order_relaxed'");
            }
        })
    }

    fn call(&mut self) -> Result<Expr, ParseError> {
        let (line, col) = self.here();
        let name = self.ident("a function name")?;
        self.expect_punct("(")?;
        let (base, explicit) = match name.strip_suffix("_explicit") {
            Some(b) => (b.to_string(), true),
            None => (name.clone(), false),
        };
        let ord = |p: &mut Parser| -> Result<MemOrder, ParseError> {
            if explicit {
                p.expect_punct(",")?;
                p.order_arg()
            } else {
                Ok(MemOrder::SeqCst)
            }
        };
        let rmw = |b: &str| -> Option<RmwOp> {
            Some(match b {
                "atomic_fetch_add" => RmwOp::Add,
                "atomic_fetch_sub" => RmwOp::Sub,
                "atomic_fetch_and" => RmwOp::And,
                "atomic_fetch_or" => RmwOp::Or,
                "atomic_fetch_xor" => RmwOp::Xor,
                "atomic_exchange" => RmwOp::Xchg,
                _ => return None,
            })
        };
        let e = match base.as_str() {
            "atomic_load" => {
                let loc = self.loc_arg()?;
                let ord = ord(self)?;
                Expr::Load { loc, ord }
            }
            "atomic_store" => {
                let loc = self.loc_arg()?;
                self.expect_punct(",")?;
                let val = Box::new(self.expr()?);
                let ord = ord(self)?;
                Expr::Store { loc, val, ord }
            }
            b if rmw(b).is_some() => {
                let loc = self.loc_arg()?;
                self.expect_punct(",")?;
                let val = Box::new(self.expr()?);
                let ord = ord(self)?;
                Expr::Rmw {
                    loc,
                    op: rmw(b).unwrap(),
                    val,
                    ord,
                }
            }
            "atomic_compare_exchange_strong" | "atomic_compare_exchange_weak" => {
                let loc = self.loc_arg()?;
                self.expect_punct(",")?;
                let expected = self.loc_arg()?;
                if expected.offset.is_some() {
                    return self.unsupported("an array element as the expected-value location");
                }
                let expected = expected.base;
                self.expect_punct(",")?;
                let desired = Box::new(self.expr()?);
                let (success, failure) = if explicit {
                    self.expect_punct(",")?;
                    let s = self.order_arg()?;
                    self.expect_punct(",")?;
                    (s, self.order_arg()?)
                } else {
                    (MemOrder::SeqCst, MemOrder::SeqCst)
                };
                Expr::Cas {
                    loc,
                    expected,
                    desired,
                    success,
                    failure,
                    weak: base.ends_with("weak"),
                }
            }
            "atomic_thread_fence" => {
                let o = self.order_arg()?;
                self.sc_fence |= o.is_sc();
                Expr::Fence(o)
            }
            "spin_lock" => Expr::Lock(self.loc_arg()?),
            "spin_unlock" => Expr::Unlock(self.loc_arg()?),
            "spin_trylock" => Expr::TryLock(self.loc_arg()?),
            "sem_take" | "sem_trytake" | "sem_give" => {
                let loc = self.loc_arg()?;
                self.expect_punct(",")?;
                let n = Box::new(self.expr()?);
                match base.as_str() {
                    "sem_give" => Expr::Rmw {
                        loc,
                        op: RmwOp::Add,
                        val: n,
                        ord: MemOrder::Release,
                    },
                    _ => Expr::Take {
                        loc,
                        n,
                        waits: base == "sem_take",
                    },
                }
            }
            // A reference count as `Arc` keeps it: relaxed increments, release
            // decrements; the decrement's value is 1 when it released the last
            // reference, else 0 (nothing more may be learnt from them).
            "atomic_refcount_inc" | "atomic_refcount_dec" => {
                let inc = base == "atomic_refcount_inc";
                Expr::Rmw {
                    loc: self.loc_arg()?,
                    op: if inc { RmwOp::RefInc } else { RmwOp::RefDec },
                    val: Box::new(Expr::Int(1)),
                    ord: if inc {
                        MemOrder::Relaxed
                    } else {
                        MemOrder::Release
                    },
                }
            }
            _ => {
                return Err(ParseError {
                    line,
                    col,
                    msg: format!("unsupported construct: the function '{name}'"),
                })
            }
        };
        self.expect_punct(")")?;
        let access = match &e {
            Expr::Rmw { loc, op, .. } => Some((loc.base, op.is_refcount())),
            Expr::Load { loc, .. } | Expr::Store { loc, .. } | Expr::Cas { loc, .. } => {
                Some((loc.base, false))
            }
            Expr::Lock(loc) | Expr::Unlock(loc) | Expr::TryLock(loc) | Expr::Take { loc, .. } => {
                Some((loc.base, false))
            }
            _ => None,
        };
        if let Some((base, refcount)) = access {
            self.accesses.push((base, refcount));
        }
        Ok(e)
    }

    /// See [`LitmusTest::refcount_order_observable`].
    fn refcount_order_observable(&self) -> bool {
        let refcount = |b: u32| self.accesses.iter().any(|&(x, r)| r && x == b);
        self.accesses.iter().any(|&(_, r)| r)
            && (self.sc_fence || self.accesses.iter().any(|&(b, r)| !r && refcount(b)))
    }

    fn key(&mut self) -> Result<Key, ParseError> {
        if self.eat_punct("[") {
            let n = self.ident("a location name")?;
            self.expect_punct("]")?;
            if !self.test.locations.contains(&n) {
                self.loc_index(&n);
            }
            return Ok(Key::Loc(n));
        }
        if let Tok::Int(t) = *self.peek() {
            self.bump();
            self.expect_punct(":")?;
            let r = self.ident("a register name")?;
            if t < 0 || t as usize >= self.test.threads.len() {
                self.pos -= 3;
                return self.err(&format!(
                    "a thread number below {}",
                    self.test.threads.len()
                ));
            }
            return Ok(Key::Reg(t as u32, r));
        }
        let n = self.ident("a register 'N:r' or a location")?;
        if !self.test.locations.contains(&n) {
            self.loc_index(&n);
        }
        Ok(Key::Loc(n))
    }

    fn prop(&mut self) -> Result<Prop, ParseError> {
        let mut lhs = self.prop_and()?;
        while self.eat_punct("\\/") {
            let rhs = self.prop_and()?;
            lhs = Prop::Or(Box::new(lhs), Box::new(rhs));
        }
        Ok(lhs)
    }
    fn prop_and(&mut self) -> Result<Prop, ParseError> {
        let mut lhs = self.prop_atom()?;
        while self.eat_punct("/\\") {
            let rhs = self.prop_atom()?;
            lhs = Prop::And(Box::new(lhs), Box::new(rhs));
        }
        Ok(lhs)
    }
    fn prop_atom(&mut self) -> Result<Prop, ParseError> {
        if self.eat_punct("~") {
            return Ok(Prop::Not(Box::new(self.prop_atom()?)));
        }
        if self.eat_punct("(") {
            let p = self.prop()?;
            self.expect_punct(")")?;
            return Ok(p);
        }
        if self.is_ident("true") {
            self.bump();
            return Ok(Prop::True);
        }
        if self.is_ident("false") {
            self.bump();
            return Ok(Prop::False);
        }
        let k = self.key()?;
        self.expect_punct("=")?;
        let v = self.int()?;
        Ok(Prop::Eq(k, v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_message_passing() {
        let t = parse(
            "C MP+rel+acq\n{ [x] = 0; y = 0; }\nP0 (atomic_int* x, atomic_int* y) {\n  atomic_store_explicit(x, 1, memory_order_relaxed);\n  atomic_store_explicit(y, 1, memory_order_release);\n}\nP1 (atomic_int* x, atomic_int* y) {\n  int r0 = atomic_load_explicit(y, memory_order_acquire);\n  int r1 = atomic_load_explicit(x, memory_order_relaxed);\n}\nexists (1:r0=1 /\\ 1:r1=0)\n",
        )
        .unwrap();
        assert_eq!(t.name, "MP+rel+acq");
        assert_eq!(t.locations, vec!["x", "y"]);
        assert_eq!(t.threads.len(), 2);
        assert_eq!(t.threads[1].locals, vec!["r0", "r1"]);
        assert_eq!(t.condition.quantifier, Quantifier::Exists);
    }

    #[test]
    fn errors_name_line_and_column() {
        let e = parse("C bad\n{ x = 0; }\nP0 (atomic_int* x) {\n  int r0 = atomic_load_explicit(x memory_order_relaxed);\n}\nexists (0:r0=0)\n").unwrap_err();
        assert_eq!((e.line, e.col), (4, 35));
        assert_eq!(e.msg, "expected ',', found 'memory_order_relaxed'");
        let e = parse("C bad\n{ x = 0; }\nP0 (atomic_int* x) {\n  atomic_signal_fence(memory_order_relaxed);\n}\nexists (x=0)\n").unwrap_err();
        assert!(e.msg.contains("atomic_signal_fence"), "{}", e.msg);
        let e = parse("C bad\n{ x = 0; }\nP0 (atomic_int* x) {\n  int r0 = atomic_load_explicit(x+1, memory_order_relaxed);\n}\nexists (0:r0=0)\n").unwrap_err();
        assert!(e.msg.contains("pointer arithmetic"), "{}", e.msg);
        let t = parse("C arr\n{ int y[2] = {0, 3}; }\nP0 (atomic_int* y) {\n  int r0 = atomic_load_explicit(y+1, memory_order_relaxed);\n}\nexists (0:r0=3)\n").unwrap();
        assert_eq!(t.locations, vec!["y", "y[1]"]);
        assert_eq!(t.init, vec![0, 3]);
    }
}
