//! A reset in progress: its plan, rewritten after every step.

use super::*;

impl SessionStore {
    // --- a reset in progress ---------------------------------------------

    pub fn load_plan(&self) -> Res<Option<ResetPlan>> {
        if let Some(plan) = &self.kept.borrow().plan {
            return Ok(plan.clone());
        }
        #[derive(Deserialize)]
        struct Row {
            plan: String,
        }
        let rows: Vec<Row> = self.rows("SELECT plan FROM reset_plan WHERE id = 1", vec![])?;
        let plan = rows
            .first()
            .map(|r| serde_json::from_str(&r.plan).map_err(SessionError::storage))
            .transpose()?;
        self.kept.borrow_mut().plan = Some(plan.clone());
        Ok(plan)
    }

    /// Whether a reset was interrupted and still has steps to run.
    pub fn reset_pending(&self) -> bool {
        matches!(self.load_plan(), Ok(Some(_)))
    }

    pub fn save_plan(&self, plan: Option<&ResetPlan>) -> Res<()> {
        match plan {
            Some(plan) => {
                let json = serde_json::to_string(plan).map_err(SessionError::storage)?;
                self.exec(
                    "INSERT INTO reset_plan (id, plan) VALUES (1, ?) ON CONFLICT(id) DO UPDATE SET plan = excluded.plan",
                    vec![json.into()],
                )?;
            }
            None => {
                self.exec("DELETE FROM reset_plan WHERE id = 1", vec![])?;
            }
        }
        self.kept.borrow_mut().plan = Some(plan.cloned());
        Ok(())
    }
}
