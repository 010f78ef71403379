//! The model writes Markdown; Telegram shows HTML (`parse_mode: "HTML"`).
//! This turns one into the other, safely: every `<`, `>` and `&` of the
//! text is escaped, and the only tags written are Telegram's (`b`, `i`,
//! `s`, `code`, `pre`, `a`, `blockquote`), each opened and closed around
//! a part of the text rendered in between, so the output is always well
//! nested whatever the input. Markdown that does not close (a lone `**`,
//! an unfinished link) stays as the characters it was.
//!
//! What is read: fenced code blocks (```` ```lang ````, `~~~`), inline
//! code, `**bold**` / `__bold__`, `*italic*` / `_italic_`, `~~strike~~`,
//! `[links](https://…)` (http, https, tg and mailto only), `# headings`
//! (bold), `> quotes` and `-`/`*`/`+` bullets (•). Emphasis does not span
//! lines. Should Telegram still refuse the result, the sender falls back
//! to the plain text.

/// Telegram's HTML for `markdown`.
pub fn to_html(markdown: &str) -> String {
    let lines: Vec<&str> = markdown
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    let mut blocks: Vec<String> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if let Some(fence) = Fence::open(lines[i]) {
            let body_start = i + 1;
            let mut end = body_start;
            while end < lines.len() && !fence.closes(lines[end]) {
                end += 1;
            }
            blocks.push(code_block(fence.lang.as_deref(), &lines[body_start..end]));
            // Past the closing fence (an unclosed one runs to the end).
            i = end + 1;
        } else if let Some(first) = quoted(lines[i]) {
            let mut inner = vec![line(first)];
            i += 1;
            while let Some(next) = lines.get(i).and_then(|l| quoted(l)) {
                inner.push(line(next));
                i += 1;
            }
            blocks.push(format!("<blockquote>{}</blockquote>", inner.join("\n")));
        } else {
            blocks.push(line(lines[i]));
            i += 1;
        }
    }
    blocks.join("\n")
}

/// `&`, `<` and `>` as Telegram's HTML wants them outside tags.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        push_escaped(c, &mut out);
    }
    out
}

fn push_escaped(c: char, out: &mut String) {
    match c {
        '&' => out.push_str("&amp;"),
        '<' => out.push_str("&lt;"),
        '>' => out.push_str("&gt;"),
        c => out.push(c),
    }
}

/// An opening code fence: its character, length and language.
struct Fence {
    marker: char,
    len: usize,
    lang: Option<String>,
}

impl Fence {
    fn open(line: &str) -> Option<Self> {
        let t = line.trim_start();
        let marker = t.chars().next().filter(|c| *c == '`' || *c == '~')?;
        let len = t.chars().take_while(|c| *c == marker).count();
        let info = t[len..].trim();
        // "```x```" on one line is inline code, not a fence.
        if len < 3 || (marker == '`' && info.contains('`')) {
            return None;
        }
        let lang: String = info
            .split_whitespace()
            .next()
            .unwrap_or_default()
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || "_+#.-".contains(*c))
            .take(32)
            .collect();
        Some(Self {
            marker,
            len,
            lang: (!lang.is_empty()).then_some(lang),
        })
    }

    fn closes(&self, line: &str) -> bool {
        let t = line.trim();
        t.chars().count() >= self.len && t.chars().all(|c| c == self.marker)
    }
}

fn code_block(lang: Option<&str>, body: &[&str]) -> String {
    let code = escape(&body.join("\n"));
    match lang {
        Some(lang) => format!("<pre><code class=\"language-{lang}\">{code}</code></pre>"),
        None => format!("<pre>{code}</pre>"),
    }
}

/// The text of a `>` quote line.
fn quoted(line: &str) -> Option<&str> {
    let t = line.trim_start();
    let rest = t.strip_prefix('>')?;
    Some(rest.strip_prefix(' ').unwrap_or(rest))
}

/// One line outside code blocks: a heading, a bullet or text.
fn line(text: &str) -> String {
    let t = text.trim_start();
    let hashes = t.chars().take_while(|c| *c == '#').count();
    if (1..=6).contains(&hashes) {
        let rest = &t[hashes..];
        if rest.is_empty() || rest.starts_with(char::is_whitespace) {
            // The closing `#`s of `## Title ##` are not the title.
            let title = rest.trim().trim_end_matches('#').trim_end();
            if title.is_empty() {
                return String::new();
            }
            let mut out = String::from("<b>");
            Inline::new(title).render_all(Styles::BOLD, &mut out);
            out.push_str("</b>");
            return out;
        }
    }
    let indent = &text[..text.len() - t.len()];
    let mut bullet = t.chars();
    if let (Some('-' | '*' | '+'), Some(' ')) = (bullet.next(), bullet.next()) {
        let mut out = format!("{indent}• ");
        Inline::new(t[2..].trim_start()).render_all(Styles::NONE, &mut out);
        return out;
    }
    let mut out = String::new();
    Inline::new(text).render_all(Styles::NONE, &mut out);
    out
}

/// The styles already open around a part of a line: an emphasis of a
/// style already open is not opened again, and links do not nest.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Styles(u8);

impl Styles {
    const NONE: Self = Self(0);
    const BOLD: Self = Self(1);
    const ITALIC: Self = Self(2);
    const STRIKE: Self = Self(4);
    const LINK: Self = Self(8);

    fn has(self, s: Self) -> bool {
        self.0 & s.0 != 0
    }

    fn with(self, s: Self) -> Self {
        Self(self.0 | s.0)
    }
}

/// Inline Markdown of one line, rendered by index ranges over its
/// characters. Each character is tried as an opener once, and each try
/// scans at most the rest of its range: quadratic at worst in the length
/// of a line (the gateway's pieces are at most 4 096 characters).
struct Inline {
    chars: Vec<char>,
    /// For each run of backticks (by its first index), the start of the
    /// next run as long: where a code span it opens would close. Worked
    /// out once, so stepping over code spans costs nothing per lookup.
    next_run: Vec<Option<usize>>,
}

impl Inline {
    fn new(text: &str) -> Self {
        let chars: Vec<char> = text.chars().collect();
        let mut next_run = vec![None; chars.len()];
        let mut later: std::collections::HashMap<usize, usize> = Default::default();
        let mut i = chars.len();
        while i > 0 {
            i -= 1;
            if chars[i] != '`' || chars.get(i.wrapping_sub(1)) == Some(&'`') {
                continue;
            }
            let len = chars[i..].iter().take_while(|c| **c == '`').count();
            next_run[i] = later.insert(len, i);
        }
        Self { chars, next_run }
    }

    fn render_all(&self, styles: Styles, out: &mut String) {
        self.render(0, self.chars.len(), styles, out);
    }

    fn render(&self, mut i: usize, end: usize, styles: Styles, out: &mut String) {
        while i < end {
            let c = self.chars[i];
            i = match c {
                '\\' if i + 1 < end && self.chars[i + 1].is_ascii_punctuation() => {
                    push_escaped(self.chars[i + 1], out);
                    i + 2
                }
                '`' => self.code_span(i, end, out),
                '[' | '!' if !styles.has(Styles::LINK) => match self.link(i, end, styles, out) {
                    Some(next) => next,
                    None => {
                        push_escaped(c, out);
                        i + 1
                    }
                },
                '*' | '_' | '~' => self.emphasis(i, end, styles, out),
                _ => {
                    push_escaped(c, out);
                    i + 1
                }
            };
        }
    }

    /// How many `c` follow from `i` (within `end`).
    fn run(&self, i: usize, end: usize, c: char) -> usize {
        self.chars[i..end].iter().take_while(|x| **x == c).count()
    }

    /// Where the code span opened by the backticks at `i` ends (past its
    /// closing backticks), if it closes before `end`.
    /// (A range never starts or ends inside a run of backticks: ranges
    /// are bounded by emphasis markers, brackets and the line's ends.)
    fn code_span_end(&self, i: usize, end: usize) -> Option<(usize, usize)> {
        let open = self.run(i, end, '`');
        let close = (*self.next_run.get(i)?)?;
        (close + open <= end).then_some((close, close + open))
    }

    fn code_span(&self, i: usize, end: usize, out: &mut String) -> usize {
        let open = self.run(i, end, '`');
        let Some((close, next)) = self.code_span_end(i, end) else {
            out.extend(std::iter::repeat_n('`', open));
            return i + open;
        };
        let mut content: String = self.chars[i + open..close].iter().collect();
        // "`` `x` ``": one space on each side only pads the backticks.
        if content.len() >= 2
            && content.starts_with(' ')
            && content.ends_with(' ')
            && !content.trim().is_empty()
        {
            content = content[1..content.len() - 1].to_string();
        }
        out.push_str("<code>");
        out.push_str(&escape(&content));
        out.push_str("</code>");
        next
    }

    /// `[label](url)` or `![alt](url)` at `i`: written and the index past
    /// it, or `None` when it is not a link Telegram may show.
    fn link(&self, i: usize, end: usize, styles: Styles, out: &mut String) -> Option<usize> {
        let open = if self.chars[i] == '!' { i + 1 } else { i };
        if self.chars.get(open) != Some(&'[') || open >= end {
            return None;
        }
        let label_start = open + 1;
        let mut depth = 0usize;
        let mut j = label_start;
        let label_end = loop {
            match self.chars[..end].get(j)? {
                '\\' => j += 2,
                '[' => {
                    depth += 1;
                    j += 1;
                }
                ']' if depth == 0 => break j,
                ']' => {
                    depth -= 1;
                    j += 1;
                }
                _ => j += 1,
            }
        };
        if self.chars[..end].get(label_end + 1) != Some(&'(') {
            return None;
        }
        let url_start = label_end + 2;
        let mut depth = 0usize;
        let mut j = url_start;
        let url_end = loop {
            match self.chars[..end].get(j)? {
                '(' => depth += 1,
                ')' if depth == 0 => break j,
                ')' => depth -= 1,
                _ => {}
            }
            j += 1;
        };
        let raw: String = self.chars[url_start..url_end].iter().collect();
        // `(url "title")`: the title is dropped; `(<url>)` loses its brackets.
        let url = raw.split_whitespace().next().unwrap_or_default();
        let url = url
            .strip_prefix('<')
            .and_then(|u| u.strip_suffix('>'))
            .unwrap_or(url);
        if !link_allowed(url) {
            return None;
        }
        out.push_str("<a href=\"");
        out.push_str(&escape(url).replace('"', "&quot;"));
        out.push_str("\">");
        match label_start == label_end {
            true => out.push_str(&escape(url)),
            false => self.render(label_start, label_end, styles.with(Styles::LINK), out),
        }
        out.push_str("</a>");
        Some(url_end + 1)
    }

    /// `*`, `_` or `~` at `i`: an emphasis when it closes on this line,
    /// else the run of markers as text. The index past what was written.
    fn emphasis(&self, i: usize, end: usize, styles: Styles, out: &mut String) -> usize {
        let c = self.chars[i];
        let run = self.run(i, end, c);
        let len = match (c, run) {
            ('~', 1) => 0,
            (_, 1) => 1,
            _ => 2,
        };
        let after = i + len;
        // An opener touches the text it opens; `_` does not open inside a
        // word (snake_case stays as it is).
        let opens = len > 0
            && after < end
            && !self.chars[after].is_whitespace()
            && !(c == '_' && i > 0 && self.chars[i - 1].is_alphanumeric());
        if let Some(close) = opens.then(|| self.closer(after, end, c, len)).flatten() {
            let (style, tag) = match (c, len) {
                ('~', _) => (Styles::STRIKE, "s"),
                (_, 2) => (Styles::BOLD, "b"),
                _ => (Styles::ITALIC, "i"),
            };
            match styles.has(style) {
                true => self.render(after, close, styles, out),
                false => {
                    out.push_str(&format!("<{tag}>"));
                    self.render(after, close, styles.with(style), out);
                    out.push_str(&format!("</{tag}>"));
                }
            }
            return close + len;
        }
        out.extend(std::iter::repeat_n(c, run));
        i + run
    }

    /// Where the emphasis of `len` markers `c` whose text starts at `from`
    /// closes: after text, not after a space, and for `_` not inside a
    /// word. Code spans and escaped characters are stepped over.
    fn closer(&self, from: usize, end: usize, c: char, len: usize) -> Option<usize> {
        let mut j = from;
        while j < end {
            match self.chars[j] {
                '\\' => j += 2,
                '`' => {
                    j = match self.code_span_end(j, end) {
                        Some((_, next)) => next,
                        None => j + self.run(j, end, '`'),
                    }
                }
                x if x == c => {
                    let run = self.run(j, end, c);
                    // A double closes at the end of its run ("***x***").
                    let at = match (len, run) {
                        (1, 1) => Some(j),
                        (2, r) if r >= 2 => Some(j + r - 2),
                        _ => None,
                    };
                    let ok = |k: usize| {
                        k > from
                            && !self.chars[k - 1].is_whitespace()
                            && !(c == '_'
                                && self.chars.get(k + len).is_some_and(|n| n.is_alphanumeric()))
                    };
                    if let Some(k) = at.filter(|k| ok(*k)) {
                        return Some(k);
                    }
                    j += run;
                }
                _ => j += 1,
            }
        }
        None
    }
}

/// Links Telegram opens and no script can hide behind.
fn link_allowed(url: &str) -> bool {
    let lower = url.to_ascii_lowercase();
    ["http://", "https://", "tg://", "mailto:"]
        .iter()
        .any(|scheme| lower.starts_with(scheme) && lower.len() > scheme.len())
        && url.len() <= 2048
        && !url.chars().any(|c| c.is_control() || c.is_whitespace())
}

#[cfg(test)]
#[path = "markdown_tests.rs"]
mod tests;
