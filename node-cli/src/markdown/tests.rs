use super::*;

fn tags(text: &str) -> String {
    render(Mode::Tags, text)
}

/// Feeds `text` in pieces of the given sizes (cycled, moved back to char
/// boundaries) and returns everything printed.
fn streamed(mode: Mode, text: &str, sizes: &[usize]) -> String {
    let mut stream = MarkdownStream::new(mode);
    let mut out = String::new();
    let mut at = 0;
    for &size in sizes.iter().cycle() {
        if at == text.len() {
            break;
        }
        let mut end = (at + size).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        out += &stream.push(&text[at..end]);
        at = end;
    }
    out + &stream.finish()
}

const DOCUMENT: &str = "\
# Plan for *today*

Some **bold**, some *italic*, some _also italic_ and ~~struck~~ text; `code` and ``a ` tick``.
***Both*** at once, snake_case_name, 2 * 3 * 4, a*b*c, **unclosed and `**` in code.
ça va 👋 — **très** *bien* 🎉\\*not italic\\*

## Lists
- first [the docs](https://example.com/docs) and <https://example.com>
- second ![logo](https://example.com/a.png \"Logo\")
  - nested
    * deeper
1. one
2) two
10. ten

> quoted **text**
> > nested
>
---
* * *
___
```rust
fn main() { println!(\"**not bold** # not a heading\"); }
  ``` not a closing fence
```
````
```
inner fence
```
````
~~~
tilde
~~~
Plain line with [a link](https://x.y/(z)) and [not a link] and [x]
#hashtag, -5, 2024 was good, 3.14, +1, <div> and a < b
Ends with an unclosed fence:
```
open code";

#[test]
fn headings() {
    assert_eq!(
        tags("# One\n## Two **bold**\n###### Six\n####### Seven\n#tag\n#"),
        "<h1>One</h1>\n<h2>Two <b>bold</b></h2>\n<h6>Six</h6>\n####### Seven\n#tag\n<h1></h1>"
    );
}

#[test]
fn emphasis() {
    assert_eq!(
        tags("**bold** *it* _it_ __bold__ ***both*** ~~gone~~ ~5 min"),
        "<b>bold</b> <i>it</i> <i>it</i> <b>bold</b> <b><i>both</i></b> <s>gone</s> ~5 min"
    );
    assert_eq!(
        tags("*a **b** c* and **a *b* c**"),
        "<i>a <b>b</b> c</i> and <b>a <i>b</i> c</b>"
    );
}

#[test]
fn what_is_not_emphasis_stays_as_typed() {
    assert_eq!(
        tags("2 * 3 * 4, snake_case_name, a*b*c, **unclosed, ** spaced **, \\*escaped\\*"),
        "2 * 3 * 4, snake_case_name, a<i>b</i>c, **unclosed, ** spaced **, *escaped*"
    );
}

#[test]
fn inline_code() {
    assert_eq!(
        tags("run `cargo test` or `` a ` b `` or ` ` or `**not bold**`, `unclosed"),
        "run <code>cargo test</code> or <code>a ` b</code> or <code> </code> or \
         <code>**not bold**</code>, `unclosed"
    );
    // Code binds tighter than emphasis.
    assert_eq!(tags("**a `**` b**"), "<b>a <code>**</code> b</b>");
}

#[test]
fn code_fence() {
    assert_eq!(
        tags("```rust\nlet x = **not bold**;\n\n  # not a heading\n```\nafter *it*"),
        "<fence>```rust</fence>\n<pre>let x = **not bold**;</pre>\n\n<pre>  # not a heading</pre>\n\
         <fence>```</fence>\nafter <i>it</i>"
    );
    // A closer needs at least the opener's length and nothing after it.
    assert_eq!(
        tags("````\n```\n``` x\n````"),
        "<fence>````</fence>\n<pre>```</pre>\n<pre>``` x</pre>\n<fence>````</fence>"
    );
    assert_eq!(
        tags("~~~\n```\n~~~"),
        "<fence>~~~</fence>\n<pre>```</pre>\n<fence>~~~</fence>"
    );
    // A backtick fence's info may not hold a backtick: that is inline code.
    assert_eq!(tags("```a`b```"), "<code>a`b</code>");
}

#[test]
fn an_unclosed_fence_ends_with_the_text() {
    let mut stream = MarkdownStream::new(Mode::Tags);
    let first = stream.push("```\ncode\n") + &stream.finish();
    assert_eq!(first, "<fence>```</fence>\n<pre>code</pre>\n");
    assert_eq!(stream.push("*it*\n"), "<i>it</i>\n");
}

#[test]
fn lists() {
    assert_eq!(
        tags("- a\n* b\n+ c\n  - nested\n      - deep\n-\n- \n1. one\n2) two\n123. **big**"),
        "<bullet>•</bullet> a\n<bullet>•</bullet> b\n<bullet>•</bullet> c\n  \
         <bullet>◦</bullet> nested\n      <bullet>▪</bullet> deep\n-\n\
         <bullet>•</bullet> \n<num>1.</num> one\n<num>2)</num> two\n<num>123.</num> <b>big</b>"
    );
    assert_eq!(
        tags("-5 degrees\n--x\n3.14\n1234567890. no\n2024 was"),
        "-5 degrees\n--x\n3.14\n1234567890. no\n2024 was"
    );
}

#[test]
fn block_quotes() {
    assert_eq!(
        tags("> quoted **text**\n>no space\n> > nested\n>\n> - item\n> ```\n"),
        "<quote>│</quote> quoted <b>text</b>\n<quote>│</quote> no space\n\
         <quote>│</quote> <quote>│</quote> nested\n<quote>│</quote>\n\
         <quote>│</quote> <bullet>•</bullet> item\n<quote>│</quote> ```\n"
    );
}

#[test]
fn links() {
    assert_eq!(
        tags(
            "[docs](https://x.y/docs) [https://x.y](https://x.y) [](https://e.mp) \
             [t](https://w.p/A_(b) \"Title\") ![alt](a.png) <https://x.y/z> [*em*](u)"
        ),
        "<link>docs</link> <url>(https://x.y/docs)</url> <link>https://x.y</link> \
         <link>https://e.mp</link> <link>t</link> <url>(https://w.p/A_(b))</url> \
         <link>alt</link> <url>(a.png)</url> <link>https://x.y/z</link> \
         <link><i>em</i></link> <url>(u)</url>"
    );
    assert_eq!(
        tags("[not a link] [x] [open ![ <div> a < b <ftp://x> [a](b"),
        "[not a link] [x] [open ![ <div> a < b <ftp://x> [a](b"
    );
}

#[test]
fn rules() {
    let rule = format!("<hr>{}</hr>", "─".repeat(40));
    assert_eq!(
        tags("---\n* * *\n___\n- - -\n--\n+++"),
        format!("{rule}\n{rule}\n{rule}\n{rule}\n--\n+++")
    );
}

#[test]
fn ansi_codes() {
    assert_eq!(
        render(
            Mode::Ansi,
            "# Title **b**\n- `x` *i*\n```sh\nls\n```\n> q [l](u)"
        ),
        "\x1b[1;4;35mTitle \x1b[1mb\x1b[0m\x1b[1;4;35m\x1b[0m\n\
         \x1b[33m•\x1b[0m \x1b[36mx\x1b[0m \x1b[3mi\x1b[0m\n\
         \x1b[2m```sh\x1b[0m\n\x1b[36mls\x1b[0m\n\x1b[2m```\x1b[0m\n\
         \x1b[2m│\x1b[0m q \x1b[4ml\x1b[0m \x1b[2m(u)\x1b[0m"
    );
}

#[test]
fn plain_text_and_utf8_pass_through() {
    assert_eq!(tags("ça va 👋\n\n  indented"), "ça va 👋\n\n  indented");
}

#[test]
fn raw_mode_returns_the_input_unchanged() {
    assert_eq!(render(Mode::Raw, DOCUMENT), DOCUMENT);
    let mut stream = MarkdownStream::new(Mode::Raw);
    assert_eq!(
        (stream.push("**bo"), stream.push("ld"), stream.finish()),
        ("**bo".into(), "ld".into(), String::new())
    );
}

#[test]
fn text_shows_as_it_comes_and_markers_wait() {
    let mut stream = MarkdownStream::new(Mode::Tags);
    let pushed: Vec<String> = ["Use **bo", "ld** and ", "`co", "de` now", "!\n- ", "x"]
        .iter()
        .map(|piece| stream.push(piece))
        .collect();
    assert_eq!(
        (pushed, stream.finish()),
        (
            vec![
                "Use ".into(),
                "<b>bold</b> and ".into(),
                "".into(),
                "<code>code</code> now".into(),
                "!\n".into(),
                "<bullet>•</bullet> x".into(),
            ],
            "".into()
        )
    );
}

#[test]
fn any_split_renders_like_the_whole() {
    for mode in [Mode::Tags, Mode::Ansi] {
        let whole = render(mode, DOCUMENT);
        for size in 1..=7 {
            assert_eq!(
                streamed(mode, DOCUMENT, &[size]),
                whole,
                "pieces of {size} bytes"
            );
        }
        assert_eq!(streamed(mode, DOCUMENT, &[3, 1, 4, 1, 5, 9, 2, 6]), whole);
        for at in (0..=DOCUMENT.len()).filter(|&at| DOCUMENT.is_char_boundary(at)) {
            let mut stream = MarkdownStream::new(mode);
            let out =
                stream.push(&DOCUMENT[..at]) + &stream.push(&DOCUMENT[at..]) + &stream.finish();
            assert_eq!(out, whole, "split at byte {at}");
        }
    }
}

#[test]
fn the_document_renders() {
    let rule = format!("<hr>{}</hr>", "─".repeat(40));
    let expected = format!(
        "\
<h1>Plan for <i>today</i></h1>

Some <b>bold</b>, some <i>italic</i>, some <i>also italic</i> and <s>struck</s> text; <code>code</code> and <code>a ` tick</code>.
<b><i>Both</i></b> at once, snake_case_name, 2 * 3 * 4, a<i>b</i>c, **unclosed and <code>**</code> in code.
ça va 👋 — <b>très</b> <i>bien</i> 🎉*not italic*

<h2>Lists</h2>
<bullet>•</bullet> first <link>the docs</link> <url>(https://example.com/docs)</url> and <link>https://example.com</link>
<bullet>•</bullet> second <link>logo</link> <url>(https://example.com/a.png)</url>
  <bullet>◦</bullet> nested
    <bullet>◦</bullet> deeper
<num>1.</num> one
<num>2)</num> two
<num>10.</num> ten

<quote>│</quote> quoted <b>text</b>
<quote>│</quote> <quote>│</quote> nested
<quote>│</quote>
{rule}
{rule}
{rule}
<fence>```rust</fence>
<pre>fn main() {{ println!(\"**not bold** # not a heading\"); }}</pre>
<pre>  ``` not a closing fence</pre>
<fence>```</fence>
<fence>````</fence>
<pre>```</pre>
<pre>inner fence</pre>
<pre>```</pre>
<fence>````</fence>
<fence>~~~</fence>
<pre>tilde</pre>
<fence>~~~</fence>
Plain line with <link>a link</link> <url>(https://x.y/(z))</url> and [not a link] and [x]
#hashtag, -5, 2024 was good, 3.14, +1, <div> and a < b
Ends with an unclosed fence:
<fence>```</fence>
<pre>open code</pre>"
    );
    assert_eq!(tags(DOCUMENT), expected);
}

#[test]
fn raw_when_asked_piped_or_colorless() {
    let chosen: Vec<Mode> = [
        (false, true, false, false),
        (true, true, false, false),
        (false, false, false, false),
        (false, true, true, false),
        (false, true, false, true),
    ]
    .into_iter()
    .map(|(raw, tty, no_color, dumb)| Mode::choose(raw, tty, no_color, dumb))
    .collect();
    assert_eq!(
        chosen,
        vec![Mode::Ansi, Mode::Raw, Mode::Raw, Mode::Raw, Mode::Raw]
    );
}

/// Random lines of markdown's special characters, each split at every
/// point: the pieces render like the whole (and nothing printed is taken
/// back, which `MarkdownStream::emit` asserts).
#[test]
fn random_markdown_streams_like_the_whole() {
    const PIECES: &[&str] = &[
        "*", "**", "_", "`", "```", "~", "~~", "[", "]", "(", ")", "!", "<", ">", "\\", "#", "# ",
        "-", "- ", "+", "1", ". ", " ", "  ", "a", "é", "👋", "\n", "http://x", ":", "|",
    ];
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = |below: usize| {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (seed >> 33) as usize % below
    };
    for _ in 0..1500 {
        let len = 1 + next(24);
        let text: String = (0..len).map(|_| PIECES[next(PIECES.len())]).collect();
        let whole = render(Mode::Tags, &text);
        for at in (0..=text.len()).filter(|&at| text.is_char_boundary(at)) {
            let mut stream = MarkdownStream::new(Mode::Tags);
            let out = stream.push(&text[..at]) + &stream.push(&text[at..]) + &stream.finish();
            assert_eq!(out, whole, "{text:?} split at byte {at}");
        }
        assert_eq!(
            streamed(Mode::Tags, &text, &[1]),
            whole,
            "{text:?} byte by byte"
        );
    }
}
