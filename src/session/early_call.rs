//! A run's first model call can go out with the session's previous prompt
//! while the workspace is checked (R2 listings: tens of milliseconds on
//! Cloudflare, several locally), instead of after the check: the check then
//! hides behind the model's own latency. Nothing of that call is shown or
//! kept unless the check assembles the very same prompt; a changed
//! workspace cancels the call and the run calls again with the new prompt.

use futures::future::{select, Either};
use std::cell::Cell;
use std::future::Future;
use std::pin::pin;

/// What the check said of a call made early.
#[derive(Debug, PartialEq)]
pub enum Checked<R, P, E> {
    /// The prompt was current: the call's result, and the checked prompt.
    Same(R, P),
    /// The prompt changed: the call was cancelled; call again with this one.
    Changed(P),
    /// The check failed: the call was cancelled.
    Failed(E),
}

/// Runs `call` (made with `early`) and `check` together. `shown` opens as
/// soon as the check agrees, so the call's text is held until then and
/// streams from there; `cancel` aborts the call when the check disagrees
/// or fails first. `same` compares the prompt checked with `early`.
pub async fn race<R, P, E>(
    call: impl Future<Output = R>,
    check: impl Future<Output = Result<P, E>>,
    same: impl Fn(&P) -> bool,
    shown: &Cell<bool>,
    cancel: impl FnOnce(),
) -> Checked<R, P, E> {
    let (call, check) = (pin!(call), pin!(check));
    match select(call, check).await {
        Either::Left((result, check)) => match check.await {
            Ok(p) if same(&p) => Checked::Same(result, p),
            Ok(p) => Checked::Changed(p),
            Err(e) => Checked::Failed(e),
        },
        Either::Right((checked, call)) => match checked {
            Ok(p) if same(&p) => {
                shown.set(true);
                Checked::Same(call.await, p)
            }
            // The call (pinned in this frame) is dropped on return.
            other => {
                cancel();
                match other {
                    Ok(p) => Checked::Changed(p),
                    Err(e) => Checked::Failed(e),
                }
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::channel::oneshot;
    use futures::executor::block_on;
    use futures::FutureExt;
    use std::rc::Rc;

    /// A call that finishes when `finish` fires and records whether text
    /// was shown when it did.
    async fn call(finish: oneshot::Receiver<()>, shown: Rc<Cell<bool>>) -> &'static str {
        let _ = finish.await;
        if shown.get() {
            "answer, streamed"
        } else {
            "answer, held"
        }
    }

    #[test]
    fn a_check_that_agrees_first_lets_the_call_stream_on() {
        let shown = Rc::new(Cell::new(false));
        let (finish, finished) = oneshot::channel();
        let cancelled = Cell::new(false);
        let check = async move {
            // The check ends before the call; then the call may finish.
            let _ = finish.send(());
            Ok::<_, ()>("prompt")
        };
        let out = block_on(race(
            call(finished, shown.clone()),
            check,
            |p| *p == "prompt",
            &shown,
            || cancelled.set(true),
        ));
        assert_eq!(
            (out, cancelled.get()),
            (Checked::Same("answer, streamed", "prompt"), false)
        );
    }

    #[test]
    fn a_call_that_ends_first_waits_for_the_check_and_shows_nothing() {
        let shown = Rc::new(Cell::new(false));
        let (finish, finished) = oneshot::channel();
        finish.send(()).unwrap();
        let (agree, agreed) = oneshot::channel::<()>();
        let check = agreed.map(|_| Ok::<_, ()>("prompt"));
        let racing = race(
            call(finished, shown.clone()),
            check,
            |p| *p == "prompt",
            &shown,
            || {},
        );
        let mut racing = pin!(racing);
        // The call is done, the check is not: no outcome yet.
        assert_eq!(racing.as_mut().now_or_never(), None);
        agree.send(()).unwrap();
        assert_eq!(block_on(racing), Checked::Same("answer, held", "prompt"));
    }

    #[test]
    fn a_changed_prompt_cancels_the_call_whichever_ends_first() {
        // The check first: the call is cancelled and never finishes.
        let shown = Rc::new(Cell::new(false));
        let (_finish, finished) = oneshot::channel::<()>();
        let cancelled = Cell::new(false);
        let out = block_on(race(
            call(finished, shown.clone()),
            async { Ok::<_, ()>("new prompt") },
            |p| *p == "old prompt",
            &shown,
            || cancelled.set(true),
        ));
        assert_eq!(
            (out, cancelled.get(), shown.get()),
            (Checked::Changed("new prompt"), true, false)
        );

        // The call first: its answer is dropped.
        let (finish, finished) = oneshot::channel();
        finish.send(()).unwrap();
        let out = block_on(race(
            call(finished, shown.clone()),
            async { Ok::<_, ()>("new prompt") },
            |p| *p == "old prompt",
            &shown,
            || {},
        ));
        assert_eq!((out, shown.get()), (Checked::Changed("new prompt"), false));
    }

    #[test]
    fn a_failed_check_cancels_the_call() {
        let shown = Rc::new(Cell::new(false));
        let (_finish, finished) = oneshot::channel::<()>();
        let cancelled = Cell::new(false);
        let out = block_on(race(
            call(finished, shown.clone()),
            async { Err::<&str, _>("R2 unreachable") },
            |_| true,
            &shown,
            || cancelled.set(true),
        ));
        assert_eq!(
            (out, cancelled.get()),
            (Checked::Failed("R2 unreachable"), true)
        );
    }
}
