use super::*;

#[test]
fn text_is_escaped_everywhere() {
    assert_eq!(to_html("a < b && c > d"), "a &lt; b &amp;&amp; c &gt; d");
    assert_eq!(to_html("&amp; stays as typed"), "&amp;amp; stays as typed");
    assert_eq!(
        to_html("<script>alert(1)</script>"),
        "&lt;script&gt;alert(1)&lt;/script&gt;"
    );
    assert_eq!(
        to_html("<b>not a tag</b> <a href=\"x\">"),
        "&lt;b&gt;not a tag&lt;/b&gt; &lt;a href=\"x\"&gt;"
    );
    assert_eq!(to_html(""), "");
    assert_eq!(to_html("plain\nlines\n\nkept"), "plain\nlines\n\nkept");
}

#[test]
fn emphasis_strike_and_inline_code() {
    let cases = [
        ("**bold** and __bold__", "<b>bold</b> and <b>bold</b>"),
        ("*italic* and _italic_", "<i>italic</i> and <i>italic</i>"),
        ("~~gone~~", "<s>gone</s>"),
        ("***both***", "<b><i>both</i></b>"),
        ("**bold _and italic_**", "<b>bold <i>and italic</i></b>"),
        ("`a < b`", "<code>a &lt; b</code>"),
        ("`**not bold**`", "<code>**not bold**</code>"),
        ("`` a`b ``", "<code>a`b</code>"),
        ("**a `*` b**", "<b>a <code>*</code> b</b>"),
        (
            "**[x](https://x.y)**",
            "<b><a href=\"https://x.y\">x</a></b>",
        ),
    ];
    for (md, html) in cases {
        assert_eq!(to_html(md), html, "{md}");
    }
}

#[test]
fn markers_that_open_nothing_stay_text() {
    let cases = [
        ("2 * 3 * 4", "2 * 3 * 4"),
        ("snake_case_name", "snake_case_name"),
        ("a ** b", "a ** b"),
        ("**unclosed", "**unclosed"),
        ("*x **y", "*x **y"),
        ("~single~", "~single~"),
        ("`unclosed code", "`unclosed code"),
        ("\\*escaped\\* \\<", "*escaped* &lt;"),
        ("**bold\nover lines**", "**bold\nover lines**"),
        ("C:\\path\\file", "C:\\path\\file"),
    ];
    for (md, html) in cases {
        assert_eq!(to_html(md), html, "{md}");
    }
}

#[test]
fn fenced_code_keeps_its_language_and_escapes_everything() {
    assert_eq!(
        to_html("Look:\n```rust\nif a < b && **c** { x }\n```\ndone"),
        "Look:\n<pre><code class=\"language-rust\">if a &lt; b &amp;&amp; **c** { x }</code></pre>\ndone"
    );
    assert_eq!(to_html("```\nplain\n```"), "<pre>plain</pre>");
    assert_eq!(
        to_html("~~~py\nx\n~~~"),
        "<pre><code class=\"language-py\">x</code></pre>"
    );
    // A hostile language is cut to the characters a language name has.
    assert_eq!(
        to_html("```\"><script> x\ny\n```"),
        "<pre><code class=\"language-script\">y</code></pre>"
    );
    // Unclosed: code to the end (the gateway closes fences across pieces).
    assert_eq!(
        to_html("```js\nlet a = 1;"),
        "<pre><code class=\"language-js\">let a = 1;</code></pre>"
    );
    // A shorter fence does not close a longer one.
    assert_eq!(to_html("````\n```\n````"), "<pre>```</pre>");
    // One line of backticks is inline code.
    assert_eq!(to_html("```x```"), "<code>x</code>");
    assert_eq!(
        to_html("  ```sh\n  ls\n  ```"),
        "<pre><code class=\"language-sh\">  ls</code></pre>"
    );
    assert_eq!(
        to_html("```c++\n```"),
        "<pre><code class=\"language-c++\"></code></pre>"
    );
}

#[test]
fn links_only_to_safe_schemes_with_their_url_escaped() {
    let cases = [
        (
            "[docs](https://x.y/a_b)",
            "<a href=\"https://x.y/a_b\">docs</a>",
        ),
        (
            "[a **b**](http://x.y/?q=1&r=\"2\")",
            "<a href=\"http://x.y/?q=1&amp;r=&quot;2&quot;\">a <b>b</b></a>",
        ),
        (
            "[wiki](https://w.org/A_(b))",
            "<a href=\"https://w.org/A_(b)\">wiki</a>",
        ),
        (
            "[t](https://x.y \"title\")",
            "<a href=\"https://x.y\">t</a>",
        ),
        ("[](https://x.y)", "<a href=\"https://x.y\">https://x.y</a>"),
        (
            "![chart](https://x.y/c.png)",
            "<a href=\"https://x.y/c.png\">chart</a>",
        ),
        ("[me](tg://user?id=1)", "<a href=\"tg://user?id=1\">me</a>"),
        ("[x](javascript:alert(1))", "[x](javascript:alert(1))"),
        ("[x](data:text/html,<b>)", "[x](data:text/html,&lt;b&gt;)"),
        ("[x](https://)", "[x](https://)"),
        ("[x] (https://x.y)", "[x] (https://x.y)"),
        ("[unclosed](https://x.y", "[unclosed](https://x.y"),
        (
            "[[nested](https://a.b)](https://c.d)",
            "<a href=\"https://c.d\">[nested](https://a.b)</a>",
        ),
        ("wow!", "wow!"),
    ];
    for (md, html) in cases {
        assert_eq!(to_html(md), html, "{md}");
    }
}

#[test]
fn headings_bullets_and_quotes() {
    assert_eq!(to_html("# Title"), "<b>Title</b>");
    assert_eq!(to_html("### A **b** ###"), "<b>A b</b>");
    assert_eq!(to_html("#hashtag"), "#hashtag");
    assert_eq!(
        to_html("- one\n* two\n  + three"),
        "• one\n• two\n  • three"
    );
    assert_eq!(to_html("-1 degrees"), "-1 degrees");
    assert_eq!(
        to_html("> quoted *x*\n> more\nafter"),
        "<blockquote>quoted <i>x</i>\nmore</blockquote>\nafter"
    );
    assert_eq!(to_html("a\r\nb"), "a\nb");
}

/// The tags the output may have, each closed in order, and no `<` or `&`
/// that is not a tag or one of the four entities.
fn well_formed(html: &str) -> Result<(), String> {
    let mut open: Vec<String> = Vec::new();
    let mut rest = html;
    while let Some(at) = rest.find(['<', '&', '>']) {
        let tail = &rest[at..];
        if tail.starts_with('>') {
            return Err(format!("a bare > at {tail:?}"));
        }
        if tail.starts_with('&') {
            let entity = ["&amp;", "&lt;", "&gt;", "&quot;"]
                .iter()
                .find(|e| tail.starts_with(**e))
                .ok_or(format!("a bare & at {tail:?}"))?;
            rest = &tail[entity.len()..];
            continue;
        }
        let end = tail.find('>').ok_or("an unclosed tag")?;
        let tag = &tail[1..end];
        if let Some(name) = tag.strip_prefix('/') {
            match open.pop() {
                Some(o) if o == name => {}
                other => return Err(format!("</{name}> closes {other:?}")),
            }
        } else {
            let name = tag.split(' ').next().unwrap_or_default();
            let allowed = ["b", "i", "s", "code", "pre", "a", "blockquote"];
            if !allowed.contains(&name) {
                return Err(format!("tag {tag:?}"));
            }
            if name == "a" && !tag.starts_with("a href=\"") {
                return Err(format!("link {tag:?}"));
            }
            if name == "code" && tag != "code" && !tag.starts_with("code class=\"language-") {
                return Err(format!("code {tag:?}"));
            }
            if !tag.matches('"').count().is_multiple_of(2) {
                return Err(format!("quotes in {tag:?}"));
            }
            open.push(name.to_string());
        }
        rest = &tail[end + 1..];
    }
    match open.is_empty() {
        true => Ok(()),
        false => Err(format!("left open: {open:?}")),
    }
}

#[test]
fn any_input_gives_well_formed_html() {
    const ALPHABET: &[&str] = &[
        "*",
        "**",
        "_",
        "__",
        "~~",
        "~",
        "`",
        "```",
        "[",
        "]",
        "(",
        ")",
        "<",
        ">",
        "&",
        "\"",
        "\\",
        "\n",
        " ",
        "a",
        "b",
        "#",
        "> ",
        "- ",
        "https://x.y",
        "](",
        "!",
        "é",
        "&amp;",
        "javascript:",
        "```py\n",
    ];
    // A fixed-seed generator: the same cases every run.
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for _ in 0..20_000 {
        let len = (next() % 40) as usize;
        let input: String = (0..len)
            .map(|_| ALPHABET[(next() % ALPHABET.len() as u64) as usize])
            .collect();
        let html = to_html(&input);
        if let Err(e) = well_formed(&html) {
            panic!("{input:?} → {html:?}: {e}");
        }
    }
}

#[test]
fn a_hostile_piece_of_the_longest_size_renders_quickly() {
    let pieces = [
        "*".repeat(4096),
        "*a".repeat(2048),
        "_ _a".repeat(1024),
        "[".repeat(4096),
        "[a](".repeat(1024),
        "`*".repeat(2048),
        "*`a".repeat(1365),
        "**a `".repeat(819),
    ];
    let started = std::time::Instant::now();
    for piece in &pieces {
        well_formed(&to_html(piece)).unwrap();
    }
    // Quadratic at worst: well under a second even unoptimized.
    assert!(started.elapsed().as_secs() < 5, "{:?}", started.elapsed());
}

#[test]
fn the_text_shown_is_never_longer_than_the_markdown() {
    // Telegram's 4 096-character limit counts what is shown, not the tags.
    for md in [
        "**a** _b_ `c` [d](https://e.f) # g",
        "> q\n- l",
        "```x\ny\n```",
    ] {
        let html = to_html(md);
        let mut shown = String::new();
        let mut in_tag = false;
        for c in html.chars() {
            match c {
                '<' => in_tag = true,
                '>' => in_tag = false,
                c if !in_tag => shown.push(c),
                _ => {}
            }
        }
        let shown = shown
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&amp;", "&");
        assert!(
            shown.chars().count() <= md.chars().count(),
            "{md:?} → {shown:?}"
        );
    }
}
