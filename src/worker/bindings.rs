//! The Worker's bindings (wrangler.toml) in one place, and typed stubs
//! for the calls between objects: `SessionStub::for_key(env, key)
//! .call(&Stats(q))` instead of a binding name, an object name and a path
//! given as strings at each call site.

use crate::calls::InternalCall;
use crate::worker::rpc::call_object;
use gsv_protocol::ErrorShape;
use worker::{Bucket, Env, Stub};

/// The Session Durable Object namespace: one object per session key.
pub const SESSION: &str = "SESSION";
/// The Gateway Durable Object namespace.
pub const GATEWAY: &str = "GATEWAY";
/// The name of the one Gateway object.
pub const GATEWAY_NAME: &str = "singleton";
/// The memory index Durable Object namespace: one object per account.
pub const MEMORY_INDEX: &str = "MEMORY_INDEX";
/// The R2 bucket of workspaces, archives and media.
pub const STORAGE: &str = "STORAGE";

/// Workers AI (`[ai] binding = "AI"`); a local gateway has none.
pub const AI: &str = crate::llm::workers_ai::BINDING;

#[wasm_bindgen::prelude::wasm_bindgen]
extern "C" {
    /// A binding with `run(model, inputs)`: Workers AI's, or a local
    /// double of it bound as a service. Called as a method: through
    /// `Function.prototype.call` an RPC stub would make `call` a remote
    /// call of its own.
    pub type AiBinding;
    #[wasm_bindgen(method, catch)]
    pub fn run(
        this: &AiBinding,
        model: &str,
        inputs: &wasm_bindgen::JsValue,
    ) -> Result<js_sys::Promise, wasm_bindgen::JsValue>;
}

/// The binding `name` when it has a `run` method.
pub fn ai(env: &Env, name: &str) -> Option<AiBinding> {
    use wasm_bindgen::JsCast;
    let ai = js_sys::Reflect::get(env, &name.into()).ok()?;
    let run = js_sys::Reflect::get(&ai, &"run".into()).ok()?;
    run.is_function().then(|| ai.unchecked_into())
}

/// The `STORAGE` bucket.
pub fn bucket(env: &Env) -> worker::Result<Bucket> {
    env.bucket(STORAGE)
}

/// The Gateway object's raw stub, for what is not a JSON call (the public
/// WebSocket, a Session's event link).
pub fn gateway_object(env: &Env) -> worker::Result<Stub> {
    env.durable_object(GATEWAY)?.get_by_name(GATEWAY_NAME)
}

/// The Gateway object.
pub struct GatewayStub<'a> {
    env: &'a Env,
}

impl<'a> GatewayStub<'a> {
    pub fn get(env: &'a Env) -> Self {
        Self { env }
    }

    pub async fn call<C: InternalCall>(&self, req: &C) -> Result<C::Reply, ErrorShape> {
        call_object(self.env, GATEWAY, GATEWAY_NAME, C::PATH, req).await
    }
}

/// The Session object of one session key.
pub struct SessionStub<'a> {
    env: &'a Env,
    key: &'a str,
}

impl<'a> SessionStub<'a> {
    pub fn for_key(env: &'a Env, key: &'a str) -> Self {
        Self { env, key }
    }

    pub async fn call<C: InternalCall>(&self, req: &C) -> Result<C::Reply, ErrorShape> {
        call_object(self.env, SESSION, self.key, C::PATH, req).await
    }
}

/// The memory index object of one account.
pub struct MemoryStub<'a> {
    env: &'a Env,
    account: &'a str,
}

impl<'a> MemoryStub<'a> {
    pub fn for_account(env: &'a Env, account: &'a str) -> Self {
        Self { env, account }
    }

    pub async fn call<C: InternalCall>(&self, req: &C) -> Result<C::Reply, ErrorShape> {
        use crate::memory::calls::path;
        // Counted before it is sent: a write whose answer was lost may
        // still have been made.
        if !matches!(
            C::PATH,
            path::GET | path::SEARCH | path::RECALL | path::STATUS | path::STATS
        ) {
            MEMORY_WRITES.with(|n| n.set(n.get() + 1));
        }
        call_object(self.env, MEMORY_INDEX, self.account, C::PATH, req).await
    }
}

thread_local! {
    static MEMORY_WRITES: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// The calls this isolate made that may change a memory index (every call
/// but the reads): a session's own memory writes, which no revision from
/// the gateway tells it of before its next run.
pub fn memory_writes() -> u64 {
    MEMORY_WRITES.with(|n| n.get())
}
