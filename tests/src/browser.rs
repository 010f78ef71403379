//! A real headless Chromium (Debian's `chromium` + `chromium-driver`,
//! which `scripts/setup.sh` installs) driven over WebDriver, for the web
//! UI's end-to-end tests: one chromedriver and one fresh browser profile
//! per [`Browser`], both killed on drop.
//!
//! A missing browser is a failed test, never a skipped one.

use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{json, Value};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::harness::{free_port, repo_root};
use crate::poll::{self, ms, secs};

/// How long [`Browser::wait_js`] waits by default.
pub const WAIT: Duration = Duration::from_secs(20);

pub struct Browser {
    pub client: Client,
    driver: Option<Child>,
    _profile: tempfile::TempDir,
    /// One of the few browsers allowed at once (see [`BROWSERS`]).
    _slot: tokio::sync::SemaphorePermit<'static>,
}

/// At most two Chromiums at once: the UI tests run in parallel, each with
/// its own workerd, and on two cores more browsers than that starve the
/// pages' timers (a streamed answer's Stop then misses its moment).
static BROWSERS: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(2);

/// The UI tests run one at a time: each starts a workerd and a Chromium,
/// and in parallel on two cores their timing-based waits (a streamed
/// answer's Stop, a fold opening) failed now and then.
static ONE_TEST: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(1);

/// Held for the whole of a UI test.
pub async fn one_at_a_time() -> tokio::sync::SemaphorePermit<'static> {
    ONE_TEST
        .acquire()
        .await
        .expect("the test semaphore is never closed")
}

fn find_program(env: &str, candidates: &[&str]) -> Option<PathBuf> {
    if let Some(p) = std::env::var_os(env) {
        return Some(PathBuf::from(p));
    }
    for c in candidates {
        let p = Path::new(c);
        if p.is_absolute() {
            if p.exists() {
                return Some(p.to_path_buf());
            }
            continue;
        }
        let path = std::env::var_os("PATH").unwrap_or_default();
        for dir in std::env::split_paths(&path) {
            let full = dir.join(c);
            if full.exists() {
                return Some(full);
            }
        }
    }
    None
}

impl Browser {
    /// Starts chromedriver and a headless Chromium whose viewport is
    /// `width` × `height` CSS pixels.
    pub async fn start(width: u32, height: u32) -> Self {
        let slot = BROWSERS
            .acquire()
            .await
            .expect("the browser semaphore is never closed");
        let driver_bin = find_program("GSV_CHROMEDRIVER", &["chromedriver", "/usr/bin/chromedriver"])
            .expect("chromedriver is missing: run scripts/setup.sh (it installs Debian's chromium and chromium-driver)");
        // Debian's /usr/bin/chromium is a wrapper script; the binary itself
        // starts faster and takes the flags as given.
        let chrome_bin = find_program(
            "GSV_CHROMIUM",
            &["/usr/lib/chromium/chromium", "chromium", "chromium-browser"],
        )
        .expect("chromium is missing: run scripts/setup.sh (it installs Debian's chromium and chromium-driver)");
        let port = free_port();
        let log = std::fs::File::create(
            std::env::temp_dir().join(format!("gsv-chromedriver-{port}.log")),
        )
        .unwrap();
        let driver = Command::new(&driver_bin)
            .arg(format!("--port={port}"))
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .process_group(0)
            .spawn()
            .unwrap_or_else(|e| panic!("start {}: {e}", driver_bin.display()));
        let url = format!("http://127.0.0.1:{port}");
        wait_for_driver(port);

        let profile = tempfile::tempdir().unwrap();
        let caps = json!({
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": chrome_bin,
                "args": [
                    "--headless",
                    "--no-sandbox",
                    "--disable-gpu",
                    "--disable-quic",
                    "--no-first-run",
                    "--disable-background-networking",
                    "--disable-component-update",
                    "--disable-sync",
                    "--disable-dev-shm-usage",
                    format!("--user-data-dir={}", profile.path().display()),
                    format!("--window-size={width},{height}"),
                ],
            },
        });
        let caps = match caps {
            Value::Object(m) => m,
            _ => unreachable!(),
        };
        let connector = hyper_util::client::legacy::connect::HttpConnector::new();
        let client = ClientBuilder::new(connector)
            .capabilities(caps)
            .connect(&url)
            .await
            .unwrap_or_else(|e| panic!("a Chromium session through chromedriver: {e}"));
        let me = Self {
            client,
            driver: Some(driver),
            _profile: profile,
            _slot: slot,
        };
        // Headless windows include no browser chrome, but say so exactly.
        me.client.set_window_size(width, height).await.unwrap();
        me
    }

    pub async fn goto(&self, url: &str) {
        self.client
            .goto(url)
            .await
            .unwrap_or_else(|e| panic!("goto {url}: {e}"));
    }

    /// Runs `script` (a function body; `arguments` holds `args`) and returns
    /// what it returns.
    pub async fn js(&self, script: &str, args: Vec<Value>) -> Value {
        self.client
            .execute(script, args)
            .await
            .unwrap_or_else(|e| panic!("script failed: {e}\n{script}"))
    }

    /// Waits until `script` returns something truthy; returns it.
    pub async fn wait_js(&self, what: &str, script: &str, args: Vec<Value>) -> Value {
        self.wait_js_within(what, script, args, WAIT).await
    }

    pub async fn wait_js_within(
        &self,
        what: &str,
        script: &str,
        args: Vec<Value>,
        within: Duration,
    ) -> Value {
        let waited = poll::try_until(within, ms(50), async || {
            let v = self.js(script, args.clone()).await;
            let truthy =
                !matches!(&v, Value::Null | Value::Bool(false)) && v != json!(0) && v != json!("");
            if truthy {
                Ok(v)
            } else {
                Err(())
            }
        })
        .await;
        if let Ok(v) = waited {
            return v;
        }
        let body = self.text("body").await;
        panic!("timed out waiting for {what}; the page says:\n{body}");
    }

    /// Waits for an element matching `css`.
    pub async fn wait_css(&self, css: &str) {
        self.wait_js(
            &format!("an element {css}"),
            "return !!document.querySelector(arguments[0]);",
            vec![json!(css)],
        )
        .await;
    }

    /// The visible text of the first element matching `css` ("" if none).
    pub async fn text(&self, css: &str) -> String {
        self.js(
            "const e = document.querySelector(arguments[0]); return e ? e.innerText : '';",
            vec![json!(css)],
        )
        .await
        .as_str()
        .unwrap_or_default()
        .to_string()
    }

    /// Clicks the first element matching `css`, as a user would.
    pub async fn click(&self, css: &str) {
        self.wait_css(css).await;
        let el = self.client.find(Locator::Css(css)).await.unwrap();
        el.click()
            .await
            .unwrap_or_else(|e| panic!("click {css}: {e}"));
    }

    /// Replaces the text of the input or textarea matching `css` by typing.
    pub async fn type_into(&self, css: &str, text: &str) {
        self.wait_css(css).await;
        let el = self.client.find(Locator::Css(css)).await.unwrap();
        el.clear().await.unwrap();
        el.send_keys(text)
            .await
            .unwrap_or_else(|e| panic!("type into {css}: {e}"));
    }

    /// Saves a PNG of the viewport as target/ui-screenshots/NAME.png.
    pub async fn screenshot(&self, name: &str) -> PathBuf {
        let png = self.client.screenshot().await.unwrap();
        let dir = std::env::var_os("CARGO_TARGET_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| repo_root().join("target"))
            .join("ui-screenshots");
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!("{name}.png"));
        std::fs::write(&path, png).unwrap();
        path
    }

    pub async fn close(mut self) {
        let _ = self.client.clone().close().await;
        self.kill();
    }

    fn kill(&mut self) {
        if let Some(mut driver) = self.driver.take() {
            // chromedriver's Chromium processes are in its group.
            unsafe { libc::killpg(driver.id() as i32, libc::SIGKILL) };
            let _ = driver.wait();
        }
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        self.kill();
    }
}

fn wait_for_driver(port: u16) {
    use std::io::{Read, Write};
    poll::until_blocking(secs(20), ms(50), || {
        let mut buf = String::new();
        if let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", port)) {
            let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
            let _ = s
                .write_all(b"GET /status HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
            let _ = s.read_to_string(&mut buf);
        }
        if buf.contains("\"ready\"") {
            Ok(())
        } else {
            Err(format!("chromedriver did not start on port {port}"))
        }
    });
}
