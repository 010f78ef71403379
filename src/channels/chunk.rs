//! Splitting an answer into messages a chat platform accepts (Discord:
//! 2 000 characters, WhatsApp: 4 096). Splits fall on the last paragraph
//! break that fits, else the last line break, else the last space, else
//! mid-word; a split inside a fenced code block closes the fence at the end
//! of the piece and reopens it (with its language) at the start of the
//! next, so every piece renders as the code it was.

/// The most characters one message may hold on `channel`'s platform
/// (bots on Discord: 2 000; WhatsApp's Cloud API and Telegram: 4 096),
/// for a channel that cannot say (a channel Worker tells its own in its
/// capabilities, and that is used first).
pub fn platform_limit(channel: &str) -> usize {
    match channel {
        "whatsapp" | "telegram" => 4096,
        _ => 2000,
    }
}

/// Splits `text` into pieces of at most `limit` characters (Unicode scalar
/// values, as the platforms count them). Pieces are trimmed of the blank
/// lines at a split; an empty or blank text gives no pieces.
pub fn split_message(text: &str, limit: usize) -> Vec<String> {
    let text = text.trim_matches('\n');
    if text.trim().is_empty() {
        return Vec::new();
    }
    let limit = limit.max(MIN_LIMIT);
    let mut pieces = Vec::new();
    let mut rest: Vec<char> = text.chars().collect();
    // The fence opened before the current piece, reopened at its start.
    let mut open_fence: Option<String> = None;
    loop {
        let prefix: Vec<char> = match &open_fence {
            // A fence line too long to repeat is reopened without its info.
            Some(fence) if fence.chars().count() + CLOSE.len() < limit / 4 => {
                format!("{fence}\n").chars().collect()
            }
            Some(_) => "```\n".chars().collect(),
            None => Vec::new(),
        };
        if prefix.len() + rest.len() <= limit {
            let piece: String = prefix.iter().chain(rest.iter()).collect();
            pieces.push(piece);
            break;
        }
        // Room for the text of this piece, keeping space to close a fence.
        let budget = limit - prefix.len() - CLOSE.len();
        let cut = cut_point(&rest[..budget.min(rest.len())]);
        let head: String = rest[..cut].iter().collect();
        let head = head.trim_end_matches(['\n', ' ']);
        let fence_after = fence_state(open_fence.as_deref(), head);
        let mut piece: String = prefix.iter().collect();
        piece.push_str(head);
        if fence_after.is_some() {
            piece.push_str(CLOSE);
        }
        pieces.push(piece);
        let tail: String = rest[cut..].iter().collect();
        let tail = tail.trim_start_matches(['\n', ' ']);
        rest = tail.chars().collect();
        open_fence = fence_after;
        if rest.is_empty() {
            break;
        }
    }
    pieces
}

/// Below this a piece could not hold a reopened fence and some text.
const MIN_LIMIT: usize = 64;
/// What closes a fence at the end of a piece.
const CLOSE: &str = "\n```";

/// Where to cut `window` (the most a piece may hold): after the last
/// paragraph break, else line break, else space, in its second half;
/// else at its end.
fn cut_point(window: &[char]) -> usize {
    let half = window.len() / 2;
    let last = |pat: &[char]| {
        (half..window.len().saturating_sub(pat.len() - 1))
            .rev()
            .find(|&i| window[i..].starts_with(pat))
            .map(|i| i + pat.len())
    };
    last(&['\n', '\n'])
        .or_else(|| last(&['\n']))
        .or_else(|| last(&[' ']))
        .unwrap_or(window.len())
}

/// The fence still open after `text`, given the one open before it: a
/// line starting with three backticks opens a fence (keeping its info
/// string, e.g. "```rust") or closes the open one.
fn fence_state(open: Option<&str>, text: &str) -> Option<String> {
    let mut open = open.map(str::to_string);
    for line in text.lines() {
        let line = line.trim_start();
        if line.starts_with("```") {
            open = match open {
                Some(_) => None,
                None => Some(line.trim_end().to_string()),
            };
        }
    }
    open
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lengths(pieces: &[String]) -> Vec<usize> {
        pieces.iter().map(|p| p.chars().count()).collect()
    }

    #[test]
    fn short_text_is_one_piece_and_blank_text_none() {
        assert_eq!(split_message("hello", 2000), ["hello"]);
        assert_eq!(split_message("\n\nhello\n", 2000), ["hello"]);
        assert!(split_message("  \n ", 2000).is_empty());
    }

    #[test]
    fn splits_on_paragraphs_then_lines_then_spaces() {
        let para = format!("{}\n\n{}", "a".repeat(60), "b".repeat(60));
        assert_eq!(split_message(&para, 100), ["a".repeat(60), "b".repeat(60)]);
        let lines = format!("{}\n{}", "a".repeat(60), "b".repeat(60));
        assert_eq!(split_message(&lines, 100), ["a".repeat(60), "b".repeat(60)]);
        let words = format!("{} {}", "a".repeat(60), "b".repeat(60));
        assert_eq!(split_message(&words, 100), ["a".repeat(60), "b".repeat(60)]);
        // No break at all: cut at the limit (less room kept for a fence).
        let word = "x".repeat(150);
        assert_eq!(split_message(&word, 100), ["x".repeat(96), "x".repeat(54)]);
    }

    #[test]
    fn counts_characters_not_bytes() {
        let text = "é".repeat(150);
        let pieces = split_message(&text, 100);
        assert_eq!(lengths(&pieces), [96, 54]);
        assert_eq!(pieces.concat(), text);
    }

    #[test]
    fn a_split_inside_a_code_block_closes_and_reopens_the_fence() {
        let code: Vec<String> = (0..30).map(|i| format!("let x{i} = {i};")).collect();
        let text = format!("Here:\n\n```rust\n{}\n```\nDone.", code.join("\n"));
        let pieces = split_message(&text, 200);
        assert!(pieces.len() > 2, "{pieces:?}");
        for (i, p) in pieces.iter().enumerate() {
            assert!(p.chars().count() <= 200, "{p}");
            // Every piece has balanced fences.
            assert_eq!(p.matches("```").count() % 2, 0, "piece {i}: {p}");
        }
        assert!(pieces[1].starts_with("```rust\n"), "{}", pieces[1]);
        // Nothing is lost: the pieces without the added fences are the text.
        let rejoined: Vec<String> = pieces
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let p = if i > 0 {
                    p.strip_prefix("```rust\n").unwrap_or(p)
                } else {
                    p
                };
                let p = if i + 1 < pieces.len() {
                    p.strip_suffix("\n```").unwrap_or(p)
                } else {
                    p
                };
                p.to_string()
            })
            .collect();
        assert_eq!(rejoined.join("\n"), text);
    }

    #[test]
    fn a_fence_with_a_huge_info_string_is_reopened_bare() {
        let text = format!("```{}\n{}\n```", "i".repeat(80), "code line\n".repeat(40));
        let pieces = split_message(&text, 100);
        assert!(pieces.len() > 3);
        assert!(pieces[1].starts_with("```\ncode line"), "{}", pieces[1]);
        assert!(lengths(&pieces).iter().all(|&n| n <= 100));
    }

    #[test]
    fn five_thousand_characters_make_three_discord_messages() {
        let paragraph = format!("{}.", "word ".repeat(83).trim_end());
        let text = vec![paragraph; 12].join("\n\n");
        assert_eq!(text.chars().count(), 5002);
        let pieces = split_message(&text, 2000);
        assert_eq!(pieces.len(), 3);
        assert!(lengths(&pieces).iter().all(|&n| n <= 2000));
        assert_eq!(pieces.join("\n\n"), text);
    }
}
