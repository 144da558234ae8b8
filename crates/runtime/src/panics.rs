//! Panics of modelled threads: a hook keeps their messages out of the
//! test output and remembers them for the report.

use std::any::Any;
use std::cell::RefCell;

thread_local! {
    static LAST_PANIC: RefCell<Option<(String, Option<String>)>> = const { RefCell::new(None) };
}

/// Records the panic the hook saw last (the hook keeps messages of modelled
/// threads out of the test output; the report shows them).
pub(crate) fn take_last_panic() -> Option<(String, Option<String>)> {
    LAST_PANIC.with(|p| p.borrow_mut().take())
}

/// Installs (once) a panic hook that stays silent for panics of modelled
/// threads and remembers their message and place.
pub(crate) fn install_panic_hook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            // A panic outside user code (the checker's own) is printed.
            let modelled = MODELLING.with(|m| m.get()) && crate::alloc::in_fiber();
            if !modelled {
                previous(info);
                return;
            }
            let msg = panic_message(info.payload());
            let place = info.location().map(|l| l.to_string());
            LAST_PANIC.with(|p| *p.borrow_mut() = Some((msg, place)));
        }));
    });
}

thread_local! {
    /// Whether this OS thread is running a model (panics are then recorded).
    pub(crate) static MODELLING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// The text of a panic payload.
pub fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "(a panic with a non-string payload)".to_string()
    }
}
