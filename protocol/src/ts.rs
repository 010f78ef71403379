//! TypeScript declarations of the wire types, for the web UI: what
//! `web/src/protocol/generated.ts` holds (`cargo run -p gsv-protocol
//! --features ts --bin protocol-ts FILE` writes it; the UI build runs it).
//!
//! The declarations come from the types' own serde attributes (ts-rs reads
//! `rename_all`, `tag`, `untagged`, `skip_serializing_if`…), so the UI reads
//! exactly the shapes the gateway writes. Only what a `client` connection
//! can call or receive is emitted: the methods its mode may call (the
//! `methods!` table and its `Callers`), the `chat` event, the frames, and
//! every type those reach. 64-bit integers are `number`: they are
//! milliseconds and counts, far below 2^53, and arrive as JSON numbers.

use crate::requests::{visit_client_methods, Callers, ClientMethodVisitor, Method};
use crate::{
    close_codes, codes, event, ChatEvent, ClientMode, ConnectParams, Frame, HelloOkResult,
    PROTOCOL_VERSION, SECRET_MASK,
};
use std::any::TypeId;
use std::collections::{BTreeMap, HashSet};
use ts_rs::{Config, TypeVisitor, TS};

/// One row of the method table, with its types as TypeScript names.
struct TsMethod {
    name: &'static str,
    callers: Callers,
    params: String,
    result: String,
    visit: fn(&mut Collector),
}

impl TsMethod {
    fn of<M: Method>() -> Self
    where
        M::Params: TS + 'static,
        M::Result: TS + 'static,
    {
        let cfg = config();
        Self {
            name: M::NAME,
            callers: M::CALLERS,
            params: M::Params::name(&cfg),
            result: M::Result::name(&cfg),
            visit: visit_types::<M>,
        }
    }
}

/// Every method a client may call, as rows.
fn ts_methods() -> Vec<TsMethod> {
    struct Rows(Vec<TsMethod>);
    impl ClientMethodVisitor for Rows {
        fn visit<M: Method>(&mut self)
        where
            M::Params: TS + 'static,
            M::Result: TS + 'static,
        {
            self.0.push(TsMethod::of::<M>());
        }
    }
    let mut rows = Rows(Vec::new());
    visit_client_methods(&mut rows);
    rows.0
}

fn visit_types<M: Method>(c: &mut Collector)
where
    M::Params: TS + 'static,
    M::Result: TS + 'static,
{
    c.visit::<M::Params>();
    c.visit::<M::Result>();
}

fn config() -> Config {
    Config::new().with_large_int("number")
}

/// Gathers the declaration of every named type reachable from the roots,
/// each once.
struct Collector {
    cfg: Config,
    seen: HashSet<TypeId>,
    /// TypeScript name → its declaration: two Rust types may share one
    /// (`serde_json::Value` and ts-rs's stand-in are both `JsonValue`),
    /// but only with the same declaration.
    names: BTreeMap<String, String>,
    /// Name → the declaration as written out (with its docs); in name
    /// order, since ts-rs does not visit dependencies in a fixed order and
    /// the file must not change when the types did not.
    decls: BTreeMap<String, String>,
    clashes: Vec<String>,
}

impl TypeVisitor for Collector {
    fn visit<T: TS + 'static + ?Sized>(&mut self) {
        if !self.seen.insert(TypeId::of::<T>()) {
            return;
        }
        // Types with a declaration of their own have an output path;
        // primitives and containers (`Vec`, `Option`, maps) do not, and
        // are only walked through.
        if T::output_path().is_some() {
            let name = T::ident(&self.cfg);
            let decl = T::decl(&self.cfg);
            match self.names.get(&name) {
                Some(known) if *known == decl => {}
                Some(_) => self.clashes.push(name),
                None => {
                    let docs = T::docs()
                        .map(|d| format!("{}\n", d.trim_end()))
                        .unwrap_or_default();
                    self.decls
                        .insert(name.clone(), format!("{docs}export {decl}"));
                    self.names.insert(name, decl);
                }
            }
        }
        T::visit_dependencies(self);
        T::visit_generics(self);
    }
}

/// The whole generated file; an error names the TypeScript names that two
/// different Rust types would declare differently.
pub fn bindings() -> Result<String, String> {
    let cfg = config();
    let methods: Vec<TsMethod> = ts_methods()
        .into_iter()
        .filter(|m| m.callers.allow(ClientMode::Client))
        .collect();
    let mut c = Collector {
        cfg,
        seen: HashSet::new(),
        names: BTreeMap::new(),
        decls: BTreeMap::new(),
        clashes: Vec::new(),
    };
    c.visit::<Frame>();
    c.visit::<ChatEvent>();
    // `connect` is answered before the socket has a mode, so it is not
    // among the client's methods; the client sends and reads it all the same.
    c.visit::<ConnectParams>();
    c.visit::<HelloOkResult>();
    for m in &methods {
        (m.visit)(&mut c);
    }
    if !c.clashes.is_empty() {
        return Err(format!(
            "Rust types with the same TypeScript name but different shapes: {}",
            c.clashes.join(", ")
        ));
    }

    let mut out = String::from(
        "// Generated from protocol/src by `cargo run -p gsv-protocol --features ts --bin protocol-ts`\n\
         // (scripts/build-web.sh runs it). Do not edit: change the Rust types.\n\
         /* eslint-disable */\n\n",
    );
    for decl in c.decls.values() {
        out.push_str(decl);
        out.push_str("\n\n");
    }
    out.push_str(&format!(
        "/** The only protocol version the gateway speaks. */\nexport const PROTOCOL_VERSION = {PROTOCOL_VERSION};\n\n"
    ));
    out.push_str(
        "/** The methods a `client` connection may call: params and result of each. */\nexport interface ClientMethods {\n",
    );
    for m in &methods {
        out.push_str(&format!(
            "  {:?}: {{ params: {}; result: {} }};\n",
            m.name, m.params, m.result
        ));
    }
    out.push_str("}\n\n");
    out.push_str(&format!(
        "/** The event whose payload is a `ChatEvent`. */\nexport const CHAT_EVENT = {:?};\n\n",
        event::CHAT
    ));
    out.push_str(&format!(
        "/** What `config.get` shows instead of a secret. */\nexport const SECRET_MASK = {:?};\n\n",
        SECRET_MASK
    ));
    out.push_str("/** Error codes of `ErrorShape.code`. */\nexport const codes = {\n");
    for (name, code) in [
        ("NOT_CONNECTED", codes::NOT_CONNECTED),
        ("UNSUPPORTED_PROTOCOL", codes::UNSUPPORTED_PROTOCOL),
        ("INVALID_CONNECT", codes::INVALID_CONNECT),
        ("BAD_REQUEST", codes::BAD_REQUEST),
        ("UNAUTHORIZED", codes::UNAUTHORIZED),
        ("FORBIDDEN", codes::FORBIDDEN),
        ("NOT_FOUND", codes::NOT_FOUND),
        ("CONFLICT", codes::CONFLICT),
        ("PAYLOAD_TOO_LARGE", codes::PAYLOAD_TOO_LARGE),
        ("INTERNAL", codes::INTERNAL),
        ("UNAVAILABLE", codes::UNAVAILABLE),
    ] {
        out.push_str(&format!("  {name}: {code},\n"));
    }
    out.push_str("} as const;\n\n");
    out.push_str("/** WebSocket close codes the gateway uses. */\nexport const closeCodes = {\n");
    for (name, code) in [
        ("NORMAL", close_codes::NORMAL),
        ("UNAUTHORIZED", close_codes::UNAUTHORIZED),
        ("AUTH_NOT_CONFIGURED", close_codes::AUTH_NOT_CONFIGURED),
    ] {
        out.push_str(&format!("  {name}: {code},\n"));
    }
    out.push_str("} as const;\n");
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::METHODS;

    #[test]
    fn every_method_a_client_may_call_is_typed() {
        // `ts_row!` picks the rows by their callers; `Callers::allow` is
        // what the gateway checks.
        let typed: Vec<&str> = ts_methods().iter().map(|m| m.name).collect();
        let allowed: Vec<&str> = METHODS
            .iter()
            .filter(|m| m.callers.allow(ClientMode::Client))
            .map(|m| m.name)
            .collect();
        assert_eq!(typed, allowed);
    }

    #[test]
    fn the_same_types_give_the_same_file() {
        assert_eq!(bindings().unwrap(), bindings().unwrap());
    }

    #[test]
    fn tagged_enums_and_optional_fields_follow_serde() {
        let ts = bindings().unwrap();
        // Internally tagged, kebab-case: the discriminator as on the wire.
        assert!(
            ts.contains(r#"export type ChatSendResult = { "status": "started" } & ChatStartedResult | { "status": "command" } & ChatCommandResult | { "status": "directive-only" } & ChatDirectiveOnlyResult;"#),
            "{ts}"
        );
        assert!(
            ts.contains(r#"export type ChatState = "delta" | "partial" | "final" | "error";"#),
            "{ts}"
        );
        // `skip_serializing_if` fields are optional; numbers are numbers.
        assert!(ts.contains("delta?: string"), "{ts}");
        assert!(!ts.contains("bigint"), "{ts}");
        // Client methods only: a node's `tool.result` is not callable.
        assert!(ts.contains(r#""chat.send": { params: ChatSendParams; result: ChatSendResult };"#));
        assert!(!ts.contains(r#""tool.result""#));
    }
}
