//! Markdown for the terminal, rendered while it streams in.
//!
//! A reply arrives in deltas split anywhere: mid-word, mid-`**`, mid-fence,
//! mid-character never (they are `&str`s). [`MarkdownStream`] renders each
//! line as far as its meaning is already certain and holds back only the
//! rest: `Use **bo` prints `Use ` at once and waits for the closing `**`
//! (or the end of the line, which makes it literal). So nothing printed is
//! ever taken back, plain text shows as it comes, and the output is the
//! same whatever the split points (the tests feed every split).
//!
//! Lines are rendered one by one: inline styles never cross a line, and the
//! only state carried from line to line is whether a code fence is open.
//! Fenced code is printed exactly as received (styled, never re-wrapped
//! nor read as markdown); so is the text of every other line but the
//! markers it replaces (`#`, `-`, `>`, `**`, `[..](..)`…).
//!
//! Hand-written rather than a crate: pulldown-cmark and termimad parse whole
//! documents, so streaming would need this line logic anyway, and the
//! subset the agent writes fits in this file.

use std::io::IsTerminal;

/// How chat text is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Exactly as received.
    Raw,
    /// Styled with ANSI escape codes.
    Ansi,
    /// Styles as visible tags (`<b>…</b>`), for tests.
    #[cfg(test)]
    Tags,
}

impl Mode {
    /// Raw with `--raw`, when stdout is not a terminal, or when `NO_COLOR`
    /// (any non-empty value) or `TERM=dumb` is set; styled otherwise.
    pub fn detect(raw_flag: bool) -> Self {
        let env = |name| std::env::var_os(name).filter(|v| !v.is_empty());
        Self::choose(
            raw_flag,
            std::io::stdout().is_terminal(),
            env("NO_COLOR").is_some(),
            env("TERM").is_some_and(|t| t == "dumb"),
        )
    }

    fn choose(raw_flag: bool, tty: bool, no_color: bool, dumb: bool) -> Self {
        if raw_flag || !tty || no_color || dumb {
            Mode::Raw
        } else {
            Mode::Ansi
        }
    }
}

/// Renders a whole text (a slash command's answer, a message).
pub fn render(mode: Mode, text: &str) -> String {
    let mut stream = MarkdownStream::new(mode);
    let mut out = stream.push(text);
    out.push_str(&stream.finish());
    out
}

/// Renders markdown fed in pieces; see the module doc.
pub struct MarkdownStream {
    mode: Mode,
    /// The current line, without its newline.
    line: String,
    /// What was printed of the current line so far.
    emitted: String,
    /// The code fence the current line is in.
    fence: Option<Fence>,
}

impl MarkdownStream {
    pub fn new(mode: Mode) -> Self {
        Self {
            mode,
            line: String::new(),
            emitted: String::new(),
            fence: None,
        }
    }

    /// Takes the next piece of text; returns what can be printed now.
    pub fn push(&mut self, text: &str) -> String {
        if self.mode == Mode::Raw {
            return text.to_string();
        }
        let mut out = String::new();
        let mut rest = text;
        while let Some(newline) = rest.find('\n') {
            self.line.push_str(&rest[..newline]);
            self.end_line(&mut out);
            out.push('\n');
            rest = &rest[newline + 1..];
        }
        self.line.push_str(rest);
        if !self.line.is_empty() {
            let (rendered, _) = render_line(self.mode, &self.line, false, self.fence);
            self.emit(&rendered, &mut out);
        }
        out
    }

    /// The end of the text: prints what was held of the last line (without
    /// adding a newline) and closes an unclosed code fence.
    pub fn finish(&mut self) -> String {
        let mut out = String::new();
        if self.mode != Mode::Raw && !self.line.is_empty() {
            self.end_line(&mut out);
        }
        self.fence = None;
        out
    }

    fn end_line(&mut self, out: &mut String) {
        let (rendered, fence) = render_line(self.mode, &self.line, true, self.fence);
        self.emit(&rendered, out);
        self.fence = fence;
        self.line.clear();
        self.emitted.clear();
    }

    /// Prints the part of the line's rendering not printed yet.
    fn emit(&mut self, rendered: &str, out: &mut String) {
        // By construction a longer line renders to a continuation of what
        // its start rendered to; the tests check it for every split.
        debug_assert!(
            rendered.starts_with(&self.emitted),
            "{rendered:?} does not continue {:?}",
            self.emitted
        );
        if let Some(new) = rendered.get(self.emitted.len()..) {
            out.push_str(new);
        }
        self.emitted.clear();
        self.emitted.push_str(rendered);
    }
}

/// An open code fence: its character and length (a closing fence is at
/// least as long).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Fence {
    ch: u8,
    len: usize,
}

/// What a piece of text is shown as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Span {
    Bold,
    Italic,
    Strike,
    Code,
    Link,
    Url,
    Heading(usize),
    /// A code fence's own lines (with the language).
    Fence,
    /// A line inside a code fence.
    CodeBlock,
    Bullet,
    Number,
    Quote,
    Rule,
}

impl Span {
    fn sgr(self) -> &'static str {
        match self {
            Span::Bold => "\x1b[1m",
            Span::Italic => "\x1b[3m",
            Span::Strike => "\x1b[9m",
            Span::Code | Span::CodeBlock => "\x1b[36m",
            Span::Link => "\x1b[4m",
            Span::Url | Span::Fence | Span::Rule | Span::Quote => "\x1b[2m",
            Span::Heading(1) => "\x1b[1;4;35m",
            Span::Heading(2) => "\x1b[1;35m",
            Span::Heading(_) => "\x1b[1m",
            Span::Bullet | Span::Number => "\x1b[33m",
        }
    }

    #[cfg(test)]
    fn tag(self) -> String {
        match self {
            Span::Bold => "b".into(),
            Span::Italic => "i".into(),
            Span::Strike => "s".into(),
            Span::Code => "code".into(),
            Span::Link => "link".into(),
            Span::Url => "url".into(),
            Span::Heading(level) => format!("h{level}"),
            Span::Fence => "fence".into(),
            Span::CodeBlock => "pre".into(),
            Span::Bullet => "bullet".into(),
            Span::Number => "num".into(),
            Span::Quote => "quote".into(),
            Span::Rule => "hr".into(),
        }
    }
}

/// Builds one line's rendering from text and nested spans. Writes are
/// appends only, so a line's start always renders the same way.
struct Out {
    mode: Mode,
    buf: String,
    open: Vec<Span>,
}

impl Out {
    fn text(&mut self, text: &str) {
        self.buf.push_str(text);
    }

    fn open(&mut self, span: Span) {
        self.open.push(span);
        match self.mode {
            Mode::Raw => {}
            Mode::Ansi => self.buf.push_str(span.sgr()),
            #[cfg(test)]
            Mode::Tags => self.buf.push_str(&format!("<{}>", span.tag())),
        }
    }

    fn close(&mut self) {
        let Some(span) = self.open.pop() else { return };
        match self.mode {
            Mode::Raw => {}
            // Reset, then restore the spans still open around this one.
            Mode::Ansi => {
                self.buf.push_str("\x1b[0m");
                for outer in &self.open {
                    self.buf.push_str(outer.sgr());
                }
            }
            #[cfg(test)]
            Mode::Tags => self.buf.push_str(&format!("</{}>", span.tag())),
        }
        let _ = span; // only the tags name what they close
    }

    fn spanned(&mut self, span: Span, text: &str) {
        self.open(span);
        self.text(text);
        self.close();
    }
}

/// Renders one line (without its newline): all of it when `complete`, else
/// its start as far as it is decided. Also returns the fence state after
/// the line (meaningful for a complete line).
fn render_line(
    mode: Mode,
    line: &str,
    complete: bool,
    fence: Option<Fence>,
) -> (String, Option<Fence>) {
    let mut out = Out {
        mode,
        buf: String::new(),
        open: Vec::new(),
    };
    let fence = match fence {
        Some(open) => code_line(line, complete, open, &mut out),
        None => block(line, complete, true, &mut out),
    };
    if complete {
        while !out.open.is_empty() {
            out.close();
        }
    }
    (out.buf, fence)
}

/// A line inside a code fence: the closing fence, or code as it is.
fn code_line(line: &str, complete: bool, fence: Fence, out: &mut Out) -> Option<Fence> {
    let trimmed = line.trim_start_matches([' ', '\t']);
    let run = trimmed.bytes().take_while(|&b| b == fence.ch).count();
    let after = &trimmed[run..];
    let could_close = after.trim_start_matches([' ', '\t', '\r']).is_empty()
        && (after.is_empty() || run >= fence.len);
    if could_close && !complete {
        return Some(fence); // wait: the line may yet be the closing fence
    }
    if could_close && run >= fence.len {
        out.spanned(Span::Fence, line);
        return None;
    }
    if !line.is_empty() {
        out.open(Span::CodeBlock);
        out.text(line);
    }
    Some(fence)
}

const BULLETS: [&str; 3] = ["•", "◦", "▪"];

/// A line outside code: its block marker (heading, list item, quote, rule,
/// fence) rendered, then its inline text.
fn block(line: &str, complete: bool, fences: bool, out: &mut Out) -> Option<Fence> {
    let text = line.trim_start_matches([' ', '\t']);
    let indent = &line[..line.len() - text.len()];
    out.text(indent);
    let bytes = text.as_bytes();
    let &first = bytes.first()?; // a blank line
    let run = bytes.iter().take_while(|&&b| b == first).count();
    // The marker's extent is not known until a different character follows.
    let run_open = run == bytes.len() && !complete;
    let after_run = bytes.get(run).copied();
    match first {
        b'`' | b'~' if fences => {
            if run_open || (run >= 3 && !complete) {
                return None; // a fence line is shown whole
            }
            let info = &text[run..];
            if run >= 3 && !(first == b'`' && info.contains('`')) {
                out.spanned(Span::Fence, text);
                return Some(Fence {
                    ch: first,
                    len: run,
                });
            }
        }
        b'#' => {
            if run_open {
                return None;
            }
            if run <= 6 && matches!(after_run, None | Some(b' ' | b'\t')) {
                out.open(Span::Heading(run));
                inline(text[run..].trim_start(), complete, out);
                return None;
            }
        }
        b'>' => {
            if bytes.len() == 1 && !complete {
                return None;
            }
            out.spanned(Span::Quote, "│");
            let rest = &text[1..];
            if !rest.is_empty() {
                out.text(" ");
                block(rest.strip_prefix(' ').unwrap_or(rest), complete, false, out);
            }
            return None;
        }
        b'-' | b'*' | b'_' | b'+' => {
            let rule_so_far = text.bytes().all(|b| b == first || b == b' ' || b == b'\t');
            if rule_so_far && !complete {
                return None; // `- - -` or the start of a list item
            }
            if rule_so_far && first != b'+' && text.bytes().filter(|&b| b == first).count() >= 3 {
                out.spanned(Span::Rule, &"─".repeat(40));
                return None;
            }
            if first != b'_' && matches!(after_run, Some(b' ' | b'\t')) && run == 1 {
                let depth = indent
                    .chars()
                    .map(|c| if c == '\t' { 4 } else { 1 })
                    .sum::<usize>();
                let bullet = BULLETS[match depth {
                    0..=1 => 0,
                    2..=5 => 1,
                    _ => 2,
                }];
                out.spanned(Span::Bullet, bullet);
                inline(&text[1..], complete, out);
                return None;
            }
        }
        b'0'..=b'9' => {
            let digits = bytes.iter().take_while(|b| b.is_ascii_digit()).count();
            let marker = bytes.get(digits).copied();
            if marker.is_none() && !complete {
                return None;
            }
            if digits <= 9 && matches!(marker, Some(b'.' | b')')) {
                match bytes.get(digits + 1) {
                    None if !complete => return None,
                    None | Some(b' ' | b'\t') => {
                        out.spanned(Span::Number, &text[..=digits]);
                        inline(&text[digits + 1..], complete, out);
                        return None;
                    }
                    Some(_) => {}
                }
            }
        }
        _ => {}
    }
    inline(text, complete, out);
    None
}

/// How the text at one special character reads.
enum Item {
    /// Not known until more of the line comes.
    Undecided,
    /// Just text, this many bytes.
    Literal(usize),
    /// `\*`: the character after the backslash, as text.
    Escape,
    /// Emphasis: the spans, the delimiter length, where the closer starts.
    Emphasis(&'static [Span], usize, usize),
    /// A code span: the backtick count, where the closer starts.
    Code(usize, usize),
    /// `[text](url)`: text range, url, and the end (after the `)`).
    Link(std::ops::Range<usize>, String, usize),
    /// `<https://…>`: the url and the end (after the `>`).
    Autolink(std::ops::Range<usize>),
}

fn is_special(b: u8) -> bool {
    matches!(b, b'\\' | b'`' | b'*' | b'_' | b'~' | b'[' | b'!' | b'<')
}

/// Renders inline markdown as far as it is decided (all of it when
/// `complete`).
fn inline(s: &str, complete: bool, out: &mut Out) {
    let bytes = s.as_bytes();
    let mut i = 0;
    let mut text_from = 0;
    while i < bytes.len() {
        if !is_special(bytes[i]) {
            i += 1; // UTF-8 continuation bytes are never special
            continue;
        }
        out.text(&s[text_from..i]);
        match item(s, i, complete) {
            Item::Undecided => return,
            Item::Literal(len) => {
                out.text(&s[i..i + len]);
                i += len;
            }
            Item::Escape => {
                out.text(&s[i + 1..i + 2]);
                i += 2;
            }
            Item::Emphasis(spans, len, close) => {
                for &span in spans {
                    out.open(span);
                }
                inline(&s[i + len..close], true, out);
                for _ in spans {
                    out.close();
                }
                i = close + len;
            }
            Item::Code(len, close) => {
                let code = &s[i + len..close];
                let code = match code.strip_prefix(' ').and_then(|c| c.strip_suffix(' ')) {
                    Some(inner) if !inner.trim().is_empty() => inner,
                    _ => code,
                };
                out.spanned(Span::Code, code);
                i = close + len;
            }
            Item::Link(text, url, end) => {
                let label = &s[text.clone()];
                if label.is_empty() || label == url {
                    out.spanned(Span::Link, &url);
                } else {
                    out.open(Span::Link);
                    inline(label, true, out);
                    out.close();
                    out.text(" ");
                    out.spanned(Span::Url, &format!("({url})"));
                }
                i = end;
            }
            Item::Autolink(url) => {
                out.spanned(Span::Link, &s[url.clone()]);
                i = url.end + 1;
            }
        }
        text_from = i;
    }
    out.text(&s[text_from..]);
}

fn item(s: &str, i: usize, complete: bool) -> Item {
    let bytes = s.as_bytes();
    match bytes[i] {
        b'\\' => match bytes.get(i + 1) {
            None if !complete => Item::Undecided,
            Some(b) if b.is_ascii_punctuation() => Item::Escape,
            _ => Item::Literal(1),
        },
        b'`' => code_span(s, i, complete),
        b'*' | b'_' | b'~' => emphasis(s, i, complete),
        b'[' => link(s, i, complete),
        b'!' => match bytes.get(i + 1) {
            None if !complete => Item::Undecided,
            // An image shows as a link to it.
            Some(b'[') => match link(s, i + 1, complete) {
                Item::Literal(_) => Item::Literal(1),
                other => other,
            },
            _ => Item::Literal(1),
        },
        b'<' => autolink(s, i, complete),
        _ => Item::Literal(1),
    }
}

fn run_len(bytes: &[u8], i: usize) -> usize {
    bytes[i..].iter().take_while(|&&b| b == bytes[i]).count()
}

fn prev_char(s: &str, i: usize) -> Option<char> {
    s[..i].chars().next_back()
}

fn next_char(s: &str, i: usize) -> Option<char> {
    s[i..].chars().next()
}

fn is_punct(c: char) -> bool {
    c.is_ascii_punctuation() || (!c.is_alphanumeric() && !c.is_whitespace())
}

/// `` `code` ``: closed by a run of exactly as many backticks.
fn code_span(s: &str, i: usize, complete: bool) -> Item {
    let bytes = s.as_bytes();
    let len = run_len(bytes, i);
    let mut j = i + len;
    if j == bytes.len() && !complete {
        return Item::Undecided;
    }
    while j < bytes.len() {
        if bytes[j] != b'`' {
            j += 1;
            continue;
        }
        let run = run_len(bytes, j);
        if j + run == bytes.len() && !complete {
            return Item::Undecided;
        }
        if run == len {
            return Item::Code(len, j);
        }
        j += run;
    }
    if complete {
        Item::Literal(len)
    } else {
        Item::Undecided
    }
}

/// `*it*`, `**bold**`, `***both***`, `_it_`, `__bold__`, `~~struck~~`:
/// an opener followed by a non-space, closed by the first run of the same
/// length that follows a non-space. `_` does not work inside words.
fn emphasis(s: &str, i: usize, complete: bool) -> Item {
    let bytes = s.as_bytes();
    let ch = bytes[i];
    let len = run_len(bytes, i);
    if i + len == bytes.len() && !complete {
        return Item::Undecided;
    }
    let spans: &'static [Span] = match (ch, len) {
        (b'~', 2) => &[Span::Strike],
        (b'~', _) => return Item::Literal(len),
        (_, 1) => &[Span::Italic],
        (_, 2) => &[Span::Bold],
        (_, 3) => &[Span::Bold, Span::Italic],
        _ => return Item::Literal(len),
    };
    let before = prev_char(s, i);
    let after = next_char(s, i + len);
    let can_open = match after {
        None => false,
        Some(a) if a.is_whitespace() => false,
        Some(a) => {
            (!is_punct(a) || before.is_none_or(|b| b.is_whitespace() || is_punct(b)))
                && !(ch == b'_' && before.is_some_and(char::is_alphanumeric))
        }
    };
    if !can_open {
        return Item::Literal(len);
    }
    let mut j = i + len;
    while j < bytes.len() {
        match bytes[j] {
            b'\\' => j += 2,
            b'`' => match code_span(s, j, complete) {
                Item::Undecided => return Item::Undecided,
                Item::Code(n, close) => j = close + n,
                _ => j += run_len(bytes, j),
            },
            b if b == ch => {
                let run = run_len(bytes, j);
                if j + run == bytes.len() && !complete {
                    return Item::Undecided;
                }
                let before = prev_char(s, j);
                let after = next_char(s, j + run);
                let can_close = run == len
                    && before.is_some_and(|b| !b.is_whitespace())
                    && (!before.is_some_and(is_punct)
                        || after.is_none_or(|a| a.is_whitespace() || is_punct(a)))
                    && !(ch == b'_' && after.is_some_and(char::is_alphanumeric));
                if can_close {
                    return Item::Emphasis(spans, len, j);
                }
                j += run;
            }
            _ => j += 1,
        }
    }
    if complete {
        Item::Literal(len)
    } else {
        Item::Undecided
    }
}

/// `[text](url)` (a title after the url is dropped).
fn link(s: &str, i: usize, complete: bool) -> Item {
    let bytes = s.as_bytes();
    let undecided_or_literal = if complete {
        Item::Literal(1)
    } else {
        Item::Undecided
    };
    let mut depth = 0;
    let mut j = i;
    let text_end = loop {
        let Some(&b) = bytes.get(j) else {
            return undecided_or_literal;
        };
        match b {
            b'\\' => j += 2,
            b'`' => match code_span(s, j, complete) {
                Item::Undecided => return Item::Undecided,
                Item::Code(n, close) => j = close + n,
                _ => j += run_len(bytes, j),
            },
            b'[' => {
                depth += 1;
                j += 1;
            }
            b']' => {
                depth -= 1;
                if depth == 0 {
                    break j;
                }
                j += 1;
            }
            _ => j += 1,
        }
    };
    match bytes.get(text_end + 1) {
        None if !complete => return Item::Undecided,
        Some(b'(') => {}
        _ => return Item::Literal(1),
    }
    let url_start = text_end + 2;
    let mut parens = 0;
    for (k, &b) in bytes.iter().enumerate().skip(url_start) {
        match b {
            b'(' => parens += 1,
            b')' if parens == 0 => {
                let dest = s[url_start..k].trim();
                let url = dest.split_whitespace().next().unwrap_or_default();
                let url = url.trim_start_matches('<').trim_end_matches('>');
                return Item::Link(i + 1..text_end, url.to_string(), k + 1);
            }
            b')' => parens -= 1,
            _ => {}
        }
    }
    undecided_or_literal
}

/// `<https://…>`, `<mailto:…>`: the url, as a link; anything else with `<`
/// (HTML, `a < b`) is text.
fn autolink(s: &str, i: usize, complete: bool) -> Item {
    let rest = &s[i + 1..];
    match rest.find(|c: char| c == '>' || c == '<' || c.is_whitespace()) {
        Some(end) if rest.as_bytes()[end] == b'>' => {
            let url = &rest[..end];
            if ["http://", "https://", "mailto:"]
                .iter()
                .any(|scheme| url.starts_with(scheme) && url.len() > scheme.len())
            {
                Item::Autolink(i + 1..i + 1 + end)
            } else {
                Item::Literal(1)
            }
        }
        Some(_) => Item::Literal(1),
        None if complete => Item::Literal(1),
        None => Item::Undecided,
    }
}

#[cfg(test)]
mod tests;
