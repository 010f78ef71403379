//! Test-only stops on the way from a chat message to its answer. Under the
//! end-to-end tests a Worker whose `GSV_FAULT` names a step stops there
//! (the step's work is done, nothing after it happens) until the harness
//! kills workerd and starts it again without the fault: what a crash at
//! that moment leaves behind. The gateway honours it only beside
//! `GSV_TEST_CLOCK=1`; no deployment has either.

/// The variable naming the step to stop at.
pub const FAULT_VAR: &str = "GSV_FAULT";

/// Gateway: the chat's run recorded, the session not yet handed the message.
pub const INBOUND_RECORDED: &str = "inbound-recorded";
/// Session: the message queued and marked taken, the gateway not yet answered.
pub const SESSION_STORED: &str = "session-stored";
/// Session: the run's end stored, its final event not yet sent.
pub const RUN_FINISHED: &str = "run-finished";
/// Gateway: the final event received, not yet routed to the chat.
pub const EVENT_SENT: &str = "event-sent";
/// Gateway: the answer's pieces in the delivery ledger, none sent yet.
pub const LEDGER_WRITTEN: &str = "ledger-written";
/// Channel: the platform's send call made and answered, the answer not read.
pub const PLATFORM_CALLED: &str = "platform-called";
/// Channel: the platform's answer read, not yet recorded or passed back.
pub const PLATFORM_ANSWERED: &str = "platform-answered";

/// Every step, in the order a message passes them.
pub const STEPS: [&str; 7] = [
    INBOUND_RECORDED,
    SESSION_STORED,
    RUN_FINISHED,
    EVENT_SENT,
    LEDGER_WRITTEN,
    PLATFORM_CALLED,
    PLATFORM_ANSWERED,
];
