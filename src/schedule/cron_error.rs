//! The five cron fields and why an expression is refused.

/// One of the five fields, for error messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CronField {
    Minute,
    Hour,
    DayOfMonth,
    Month,
    DayOfWeek,
}

impl CronField {
    pub(super) const ALL: [CronField; 5] = [
        CronField::Minute,
        CronField::Hour,
        CronField::DayOfMonth,
        CronField::Month,
        CronField::DayOfWeek,
    ];

    pub fn name(self) -> &'static str {
        match self {
            CronField::Minute => "minute",
            CronField::Hour => "hour",
            CronField::DayOfMonth => "day-of-month",
            CronField::Month => "month",
            CronField::DayOfWeek => "day-of-week",
        }
    }

    /// Inclusive bounds of the field's values.
    pub fn bounds(self) -> (u32, u32) {
        match self {
            CronField::Minute => (0, 59),
            CronField::Hour => (0, 23),
            CronField::DayOfMonth => (1, 31),
            CronField::Month => (1, 12),
            CronField::DayOfWeek => (0, 7),
        }
    }

    pub(super) fn names(self) -> &'static [&'static str] {
        match self {
            CronField::Month => &[
                "JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC",
            ],
            CronField::DayOfWeek => &["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"],
            _ => &[],
        }
    }
}

/// Why an expression was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CronError {
    /// Not exactly five fields.
    FieldCount(usize),
    /// An empty list item (`1,,2`).
    Empty(CronField),
    /// Neither a number nor a name the field knows.
    Invalid { field: CronField, token: String },
    /// A value outside the field's bounds.
    OutOfRange { field: CronField, value: u32 },
    /// A step that is zero or not a number.
    BadStep { field: CronField, token: String },
    /// `a-b` with `a > b`.
    Reversed {
        field: CronField,
        start: u32,
        end: u32,
    },
    /// `L`, `W` or `#`.
    Unsupported { field: CronField, token: String },
}

impl std::fmt::Display for CronError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CronError::FieldCount(n) => write!(
                f,
                "a cron expression has 5 fields (minute hour day-of-month month day-of-week), found {n}"
            ),
            CronError::Empty(field) => write!(f, "{}: empty list item", field.name()),
            CronError::Invalid { field, token } => {
                write!(f, "{}: `{token}` is not a valid value", field.name())
            }
            CronError::OutOfRange { field, value } => {
                let (lo, hi) = field.bounds();
                write!(f, "{}: {value} is out of range {lo}-{hi}", field.name())
            }
            CronError::BadStep { field, token } => write!(
                f,
                "{}: bad step in `{token}` (a positive number is needed)",
                field.name()
            ),
            CronError::Reversed { field, start, end } => {
                write!(f, "{}: range {start}-{end} is reversed", field.name())
            }
            CronError::Unsupported { field, token } => write!(
                f,
                "{}: `{token}` uses L, W or #, which are not supported",
                field.name()
            ),
        }
    }
}

impl std::error::Error for CronError {}
