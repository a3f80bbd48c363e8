#include "gateway/workflows/runner.hpp"

#include "gateway/ids.hpp"
#include "gateway/run_events.hpp"
#include "gateway/tools/error_codes.hpp"
#include "gateway/workflows/template.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

namespace gateway::workflows {

namespace json = boost::json;
using agent::live_run;
using agent::workflow_phase;

namespace {

step_outputs outputs_of(const agent::workflow_progress& wf) {
    step_outputs out;
    for (const auto& [id, o] : wf.outputs) out[id] = step_output{o.output, o.data, o.skipped};
    return out;
}

}  // namespace

runner::runner(const config::context_config& limits, const registry& workflows,
               const tools::registry& tools, agent::run_registry& runs, agent::agent_loop& loop,
               agent::approval_gate& gate, agent::run_journal& journal,
               const agent::system_prompts& prompts, agent::model_port& model)
    : limits_(limits),
      workflows_(workflows),
      tools_(tools),
      runs_(runs),
      loop_(loop),
      gate_(gate),
      journal_(journal),
      prompts_(prompts),
      model_(model) {}

net::awaitable<agent::started_run> runner::start(store::chat_record chat,
                                                 std::shared_ptr<const workflow> definition,
                                                 std::optional<json::object> parameters,
                                                 std::string input, agent::parent_trace parent) {
    agent::run_registry::preparer prepare = [definition, parameters, input](
                                                live_run& run, json::object& started,
                                                agent::run_journal::batch&) {
        agent::workflow_progress wf;
        wf.id = definition->id;
        if (parameters) wf.parameters = *parameters;
        wf.phase = parameters ? workflow_phase::next : workflow_phase::extract;
        if (!parameters) wf.input = input;
        run.state.workflow = std::move(wf);
        started["workflow"] = definition->id;
        if (parameters)
            started["parameters"] = *parameters;
        else
            started["input"] = input;
    };
    agent::run_registry::driver drive = [this, definition](live_run& run) {
        return this->drive(run, definition);
    };
    auto started =
        co_await runs_.start_run(std::move(chat), tools::role::editor, std::move(prepare),
                                 std::move(drive), std::move(parent));
    co_return started;
}

agent::run_registry::driver runner::resume(live_run& run) {
    auto all = workflows_.all();
    const auto* found = registry::find(all, run.state.workflow->id);
    std::shared_ptr<const workflow> definition;
    if (found) definition = std::shared_ptr<const workflow>(all, found);
    return [this, definition](live_run& r) { return drive(r, definition); };
}

net::awaitable<void> runner::drive(live_run& run, std::shared_ptr<const workflow> definition) {
    auto& wf = *run.state.workflow;
    if (!definition) {
        run.end(run_status::failed, "", "The workflow `" + wf.id + "` no longer exists.");
        co_return;
    }
    const auto& steps = definition->steps;
    run.segment_started = std::chrono::steady_clock::now();
    for (;;) {
        if (run.stopping) co_return;
        if (run.cancel_requested) {
            run.end(run_status::cancelled, "", "");
            co_return;
        }
        if (wf.phase == workflow_phase::extract) {
            auto extracted = co_await extract_parameters(run, *definition);
            if (!extracted) co_return;
            continue;
        }
        if (wf.next >= steps.size()) break;
        const auto& step = steps[wf.next];
        if (wf.phase == workflow_phase::next) {
            auto begun = co_await begin_step(run, *definition);
            if (!begun) co_return;
            continue;
        }
        if (wf.phase == workflow_phase::tool) {
            if (!run.state.pending) {  // cannot happen: the call and phase are saved together
                run.end(run_status::failed, "", "Step `" + step.id + "`: the tool call was lost");
                co_return;
            }
            auto result = co_await gate_.settle(run);
            if (!result) co_return;  // ended (cancel, approval timeout) or stopping
            auto delivered = co_await deliver_step(run, *result);
            if (!delivered) co_return;
            continue;
        }
        std::string output;
        if (wf.phase == workflow_phase::prompt) {
            auto requested = journal_.begin(run);
            requested.event(event::model_requested, {{"attempt", 1}, {"step_id", step.id}});
            co_await journal_.record(run, std::move(requested));
            providers::request asked;
            asked.model = run.chat.model;
            if (const auto* base = prompts_.find(run.chat.system_prompt)) asked.system = base->body;
            asked.messages.push_back(agent::user_text(wf.text));
            auto reply = co_await loop_.ask(run, std::move(asked));
            if (!reply) co_return;
            output = reply->content.text();
        } else {  // an agent step: a segment of its own
            run.role = tools::parse_role(wf.role).value_or(tools::role::editor);
            run.system_prompt = runs_.system_prompt(run.chat, run.role);
            co_await loop_.run(run);
            if (!run.ended) co_return;  // stopping
            if (run.ended->status != run_status::completed) {
                run.ended->error = "Step `" + step.id + "`: " + run.ended->error;
                co_return;
            }
            output = run.ended->output;
            run.ended.reset();
        }
        wf.outputs[step.id] = agent::step_output{output, {}, false};
        wf.phase = workflow_phase::next;
        ++wf.next;
        wf.text.clear();
        auto done = journal_.begin(run);
        done.event(event::step_completed, {{"step_id", step.id}, {"output", output}});
        co_await journal_.checkpoint(run, std::move(done));
    }
    // The output of a workflow is its last step's that ran.
    std::string output;
    for (const auto& st : steps)
        if (auto it = wf.outputs.find(st.id); it != wf.outputs.end() && !it->second.skipped)
            output = it->second.output;
    run.end(run_status::completed, output, "");
}

net::awaitable<bool> runner::begin_step(live_run& run, const workflow& definition) {
    auto& wf = *run.state.workflow;
    auto& s = run.state;
    const auto& step = definition.steps[wf.next];
    auto outputs = outputs_of(wf);
    const auto& params = wf.parameters;
    auto fail = [&](const std::string& why) {
        run.end(run_status::failed, "", "Step `" + step.id + "`: " + why);
        return false;
    };
    if (!step.when.empty()) {
        auto condition = render(step.when, params, outputs);
        if (!condition) co_return fail(condition.error);
        if (!truthy(*condition.value)) {
            wf.outputs[step.id] = agent::step_output{"", {}, true};
            ++wf.next;
            auto skipped = journal_.begin(run);
            skipped.event(event::step_skipped, {{"step_id", step.id}});
            co_await journal_.checkpoint(run, std::move(skipped));
            co_return true;
        }
    }
    json::object started{{"step_id", step.id},
                         {"index", static_cast<std::int64_t>(wf.next + 1)},
                         {"of", static_cast<std::int64_t>(definition.steps.size())}};
    if (step.what == step::kind::tool) {
        auto rendered = render_value(step.parameters, params, outputs);
        if (!rendered) co_return fail(rendered.error);
        if (auto problem = tools_.validate(step.tool, *rendered.value); !problem.empty())
            co_return fail("invalid parameters for `" + step.tool + "` at " + problem);
        agent::pending_call p;
        p.call_id = new_id("call");
        p.tool = step.tool;
        p.parameters = rendered.value->as_object();
        p.workflow_step = step.id;
        run.open_call(std::move(p));
        wf.phase = workflow_phase::tool;
        auto b = journal_.begin(run);
        b.event(event::step_started, std::move(started));
        b.call_opened();
        co_await journal_.checkpoint(run, std::move(b));
        co_return true;
    }
    auto text = render(step.text, params, outputs);
    if (!text) co_return fail(text.error);
    if (step.what == step::kind::prompt) {
        wf.phase = workflow_phase::prompt;
        wf.text = *text.value;
    } else {
        // An agent step: a fresh segment of the conversation, its own role and limit.
        auto role = tools::parse_role(step.role).value_or(tools::role::editor);
        wf.phase = workflow_phase::agent;
        wf.role = step.role;
        s.segment_start = run.conversation.size();
        s.turns = 0;
        s.turn_limit = static_cast<int>(step.max_steps ? step.max_steps : limits_.max_steps);
        s.failed.clear();
        s.retries = 0;
        s.identical = 0;
        s.tool_errors = 0;
        s.final_request = false;
        run.role = role;
        run.system_prompt = runs_.system_prompt(run.chat, role);
        run.conversation.push_back(agent::user_text(*text.value));
    }
    auto b = journal_.begin(run);
    b.event(event::step_started, std::move(started));
    co_await journal_.checkpoint(run, std::move(b));
    co_return true;
}

// A tool step's outcome: recorded as the step's output, or the end of the run.
net::awaitable<bool> runner::deliver_step(live_run& run, const tools::tool_result& result) {
    auto& wf = *run.state.workflow;
    auto p = *run.state.pending;
    bool denied = result.error_code == tools::code::denied_by_user;
    auto b = journal_.begin(run);
    gate_.record_result(run, b, result);
    if (result.ok) {
        wf.outputs[p.workflow_step] = agent::step_output{result.text, result.data, false};
        wf.phase = workflow_phase::next;
        ++wf.next;
        b.event(event::step_completed, {{"step_id", p.workflow_step}, {"output", result.text}});
    }
    run.state.pending.reset();
    run.call.reset();
    co_await journal_.checkpoint(run, std::move(b));
    if (result.ok) co_return true;
    run.end(run_status::failed, "",
            "Step `" + p.workflow_step + "`: " +
                (denied ? "`" + p.tool + "` was not approved. " + result.text
                        : agent::result_message(p.tool, result)));
    co_return false;
}

// A workflow started from free text: one model call turns it into parameters, constrained to
// the workflow's schema when the upstream supports json_schema; defaults are applied and the
// result validated. Missing or invalid parameters end the run with what to provide.
net::awaitable<bool> runner::extract_parameters(live_run& run, const workflow& definition) {
    auto& wf = *run.state.workflow;
    std::string fields;
    if (auto* properties = definition.parameters.if_contains("properties"))
        for (const auto& [name, schema] : properties->as_object()) {
            fields += "- " + std::string(name);
            if (auto* d = schema.as_object().if_contains("description"); d && d->is_string())
                fields += ": " + std::string(d->as_string());
            fields += "\n";
        }
    providers::request asked;
    asked.model = run.chat.model;
    asked.system = "You turn a user's request into the parameters of the workflow \"" +
                   definition.name + "\" (" + definition.description +
                   "). Reply with one JSON object and nothing else. Its JSON Schema:\n" +
                   json::serialize(definition.parameters) + "\nFields:\n" + fields +
                   "Leave out what the request does not say; never invent a value.";
    asked.messages.push_back(agent::user_text(wf.input));
    if (model_.upstream_for(run.chat.model).json_schema)
        asked.format = providers::json_format{"parameters", definition.parameters, false};
    auto requested = journal_.begin(run);
    requested.event(event::model_requested, {{"attempt", 1}, {"purpose", "parameters"}});
    co_await journal_.record(run, std::move(requested));
    auto reply = co_await loop_.ask(run, std::move(asked));
    if (!reply) co_return false;
    auto said = reply->content.text();
    auto text = std::string_view(said);
    auto open = text.find('{');
    auto close = text.rfind('}');
    json::error_code ec;
    json::value parsed;
    if (open != std::string_view::npos && close != std::string_view::npos && close > open)
        parsed = json::parse(text.substr(open, close - open + 1), ec);
    if (ec || !parsed.is_object()) {
        run.end(run_status::failed, "",
                "Could not read the workflow's parameters from your request. Please give them "
                "directly:\n" +
                    fields);
        co_return false;
    }
    auto parameters = with_defaults(definition, parsed.as_object());
    if (auto problem = definition.schema->validate(parameters); !problem.empty()) {
        run.end(run_status::failed, "",
                "Your request does not give all the workflow needs (" + problem +
                    "). Please say:\n" + fields);
        co_return false;
    }
    wf.parameters = parameters;
    wf.phase = workflow_phase::next;
    auto b = journal_.begin(run);
    b.event(event::workflow_parameters, {{"parameters", parameters}});
    co_await journal_.checkpoint(run, std::move(b));
    co_return true;
}

}  // namespace gateway::workflows
