# Rule-level scenarios: a game, its config and a list of steps, each an action with the state
# expected after it (a subset of the state's keys) or the rule id it must break. The same files
# run in-process on CPython, on the MicroPython unix port, and over serial against a board; each
# runner supplies `apply(action) -> state` which raises RuleError for a refused action.
#
# A step: {"do": {action}, "expect": {state keys}} or {"do": {action}, "error": "SH-18"}.


def check_step(step, state, error_rule):
    """Compare one step's outcome with what it expects; return a list of mismatch texts."""
    problems = []
    want_err = step.get("error")
    if want_err is not None:
        if error_rule is None:
            problems.append("expected a %s error, the action was accepted" % want_err)
        elif error_rule != want_err:
            problems.append("expected a %s error, got %s" % (want_err, error_rule))
    elif error_rule is not None:
        problems.append("refused with %s" % error_rule)
    for key, value in (step.get("expect") or {}).items():
        if key not in state:
            problems.append("state has no key %r" % key)
        elif state[key] != value:
            problems.append("%s is %r, expected %r" % (key, state[key], value))
    return problems


def run(scenario, apply, current_state, rule_error):
    """Run every step; return [(index, state, error_rule, problems)] in order.

    `apply(action)` returns the new state; `current_state()` the state after a refused action;
    `rule_error` is the exception class whose `.rule` names the broken rule.
    """
    results = []
    for i, step in enumerate(scenario["steps"]):
        err = None
        try:
            state = apply(step["do"])
        except rule_error as e:
            err = e.rule
            state = current_state()
        results.append((i, state, err, check_step(step, state, err)))
    return results
