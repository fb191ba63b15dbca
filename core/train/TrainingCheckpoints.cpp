// TrainingCheckpoints.cpp — checkpoints of an ensemble's runs (periodic, plateau, stop), their slimming, and resume.
#include "core/train/TrainingLoop.h"

namespace headlab::detail {

void TrainingLoop::checkpointPlateaus()
{
    const auto &policy = m_control.checkpoints;
    if (!policy.enabled || !policy.plateaus || m_control.checkpointDirs.empty() ||
        !taskSpec(m_configs.front().task).plateauMetrics)
        return;
    drainReads(m_phase.adam, m_phase.phase);
    for (size_t i = 0; i < m_members.size(); ++i) {
        Member &m = m_members[i];
        if (!m.alive) continue;
        int events = 0;
        bool left = false;
        for (const auto &p : PlateauDetector().detect(m.result.test)) {
            events += (p.entered >= 0) + (p.left >= 0);
            left = left || p.left == m_step;
        }
        if (events > m.plateauEvents) checkpoint(i, left ? "plateau_exit" : "plateau_entry");
        m.plateauEvents = events;
    }
}

void TrainingLoop::checkpoint(size_t i, const char *reason)
{
    const auto &policy = m_control.checkpoints;
    if (!policy.enabled || i >= m_control.checkpointDirs.size() ||
        m_control.checkpointDirs[i].empty())
        return;
    drainReads(m_phase.adam, m_phase.phase); // the curves up to this step
    Member &m = m_members[i];
    auto &list = m.result.checkpoints;
    if (!list.empty() && list.back().step == m_step) { // one file a step: the stronger reason wins
        if (std::string(reason) == "final" || std::string(reason) == "stop")
            list.back().reason = reason;
        return;
    }
    const std::string dir = m_control.checkpointDirs[i];
    const std::string file = checkpointFileName(m_step);
    TrainingPosition pos;
    pos.step = m_step;
    pos.wallSeconds = std::chrono::duration<double>(Clock::now() - m_start).count();
    if (m_phase.adam) {
        pos.phase = static_cast<int64_t>(m_phase.index);
        pos.phaseStep = m_phase.phaseStep->item<int64_t>();
        pos.windowSteps = *m_phase.inWindow;
        pos.windowSum = (*m_phase.trainSum)[static_cast<int64_t>(i)].item<float>();
        pos.adamSteps = m_phase.adam->stepCount().item<double>();
    } else { // after the last phase
        pos.phase = static_cast<int64_t>(m_configs.front().phases.size());
    }
    RunResult partial = m.result;
    if (partial.status == RunStatus::Running || partial.status == RunStatus::Paused)
        partial.status = RunStatus::Running;
    try {
        writeCheckpoint(dir + "/" + file, *m_model, m_phase.adam, static_cast<int64_t>(i),
                        m_configs[i], partial, pos, reason, m_task->provenance(),
                        ensembleMembers(m_control.checkpointDirs));
    } catch (const std::exception &e) {
        const std::string note = std::string("checkpoint at step ") + std::to_string(m_step) +
                                 " not written: " + e.what();
        if (m.result.message.find("checkpoint at step") == std::string::npos)
            m.result.message = m.result.message.empty() ? note : m.result.message + "; " + note;
        return;
    }
    list.push_back({m_step, file, reason});
    // Keep every plateau checkpoint and the newest `keep` others.
    int others = 0;
    for (auto it = list.rbegin(); it != list.rend(); ++it) {
        if (it->reason.rfind("plateau", 0) == 0) continue;
        if (++others > policy.keep) {
            std::error_code error;
            std::filesystem::remove(dir + "/" + it->file, error);
            it->reason.clear(); // erased below
        }
    }
    list.erase(std::remove_if(list.begin(), list.end(),
                              [](const CheckpointRecord &c) { return c.reason.empty(); }),
               list.end());
}

void TrainingLoop::slimOlderCheckpoints(const std::vector<size_t> &members)
{
    const auto &policy = m_control.checkpoints;
    if (!policy.enabled || !policy.resumeStateNewestOnly) return;
    for (size_t i : members) { // every one wrote this step's, or none is slimmed (a full disk)
        if (i >= m_control.checkpointDirs.size() || m_control.checkpointDirs[i].empty()) return;
        const auto &list = m_members[i].result.checkpoints;
        if (list.empty() || list.back().step != m_step) return;
    }
    for (size_t i : members) {
        auto &list = m_members[i].result.checkpoints;
        for (size_t k = 0; k + 1 < list.size(); ++k) {
            const std::string path = m_control.checkpointDirs[i] + "/" + list[k].file;
            if (!m_slimmed.insert(path).second) continue;
            try {
                slimCheckpoint(path, policy.keptWeightsBf16);
            } catch (const std::exception &) {}
        }
    }
}

void TrainingLoop::loadResumeCheckpoints()
{
    const auto &from = m_control.resumeFrom;
    if (from.empty() ||
        std::all_of(from.begin(), from.end(), [](const std::string &p) { return p.empty(); }))
        return;
    if (from.size() != m_configs.size() ||
        std::any_of(from.begin(), from.end(), [](const std::string &p) { return p.empty(); }))
        throw std::invalid_argument("an ensemble resumes all its runs from checkpoints or none");
    // The steps to try, newest first: the asked one, then older ones every member has.
    std::vector<std::map<int64_t, std::string>> byStep(from.size());
    int64_t asked = -1;
    for (size_t i = 0; i < from.size(); ++i) {
        for (const auto &info :
             listCheckpoints(std::filesystem::path(from[i]).parent_path().string(), nullptr, false))
            if (!info.weightsOnly) byStep[i][info.step] = info.path;
        try {
            const CheckpointInfo info = inspectCheckpoint(from[i], false);
            if (!info.weightsOnly) byStep[i][info.step] = from[i];
            if (i == 0) asked = info.step;
        } catch (const SessionError &) {}
    }
    if (asked < 0)
        asked = std::numeric_limits<int64_t>::max(); // the asked file is gone: any step will do
    std::vector<int64_t> common = stepsEveryMemberHas(byStep);
    std::erase_if(common, [asked](int64_t step) { return step > asked; });
    std::vector<std::string> problems;
    if (common.empty())
        problems.push_back(from.front() +
                           ": no checkpoint of a step every run of its ensemble has is left");
    for (const int64_t step : common) {
        try {
            for (size_t i = 0; i < from.size(); ++i) {
                LoadedCheckpoint c = loadCheckpoint(byStep[i].at(step), &m_configs[i]);
                const auto now = m_task->provenance();
                // The release before Task::paths() recorded the nearest-neighbour task's
                // fused_points as its data: a path, never a reason to refuse the file.
                for (const auto &[key, value] : m_task->paths()) c.taskData.erase(key);
                if (!c.taskData.empty() && c.taskData != now)
                    throw fileError(c.path, "is not a usable checkpoint: the run's data "
                                            "changed since it was written (" +
                                                describeChange(c.taskData, now) + ")");
                checkCheckpointFits(c, *m_model, static_cast<int64_t>(i));
                m_resume.push_back(std::move(c));
            }
        } catch (const SessionError &e) {
            problems.push_back(e.what());
            for (const auto &m : byStep)
                if (const auto it = m.find(step); it != m.end() && e.file() == it->second)
                    setAside(it->second);
            m_resume.clear();
            continue;
        }
        for (size_t i = 0; i < m_resume.size(); ++i)
            restoreWeights(m_resume[i], *m_model, static_cast<int64_t>(i));
        m_resumedWall = m_resume.front().position.wallSeconds;
        break;
    }
    if (problems.empty()) return;
    std::string note;
    for (const auto &p : problems) note += (note.empty() ? "" : "; ") + p;
    note += m_resume.empty() ? "; every run of its ensemble trained again from step 0"
                             : "; resumed from step " +
                                   std::to_string(m_resume.front().position.step) + " instead";
    addNote(note);
}

size_t TrainingLoop::applyResume()
{
    const TrainingPosition pos = m_resume.front().position;
    m_step = pos.step;
    m_startedAt = pos.step;
    m_globalStep.fill_(pos.step);
    for (size_t i = 0; i < m_resume.size(); ++i) {
        Member &m = m_members[i];
        const std::string deviceName = m.result.device;
        m.result = m_resume[i].partial;
        m.result.device = deviceName;
        m.result.checkpoints.clear();
        // The checkpoints before it, from this run's earlier tries, are listed too (oldest first),
        // so that `keep` prunes them like any other; the one it resumed from stays listed.
        const auto dir = std::filesystem::path(m_resume[i].path).parent_path().string();
        const auto earlier = listCheckpoints(dir, nullptr, false);
        for (auto it = earlier.rbegin(); it != earlier.rend(); ++it)
            if (it->step < pos.step)
                m.result.checkpoints.push_back(
                    {it->step, std::filesystem::path(it->path).filename().string(), it->reason});
        m.result.checkpoints.push_back({pos.step,
                                        std::filesystem::path(m_resume[i].path).filename().string(),
                                        m_resume[i].reason});
        for (const auto &p : PlateauDetector().detect(m.result.test))
            m.plateauEvents += (p.entered >= 0) + (p.left >= 0);
        if (m.result.status == RunStatus::Diverged) {
            m.alive = false;
            m_alive[static_cast<int64_t>(i)].fill_(0.0);
            m_firstBad[static_cast<int64_t>(i)].fill_(m.result.divergedAtStep);
        } else if (m.result.status == RunStatus::Done) { // ended by stop_after_learned
            m.alive = false;
            m.finishedEarly = true;
            m_alive[static_cast<int64_t>(i)].fill_(0.0);
        } else {
            m.result.status = RunStatus::Running;
            m.result.message.clear();
        }
        m.reportedTrain = m.reportedTest =
            0; // a listener gets the curves so far with the first report
    }
    for (const auto &m : m_members)
        if (!m.result.test.empty())
            m_lastEvalStep = std::max(m_lastEvalStep, m.result.test.back().step);
    if (static_cast<size_t>(pos.phase) >= m_configs.front().phases.size()) m_resume.clear();
    return static_cast<size_t>(pos.phase);
}

std::string TrainingLoop::describeChange(const std::map<std::string, std::string> &was,
                                         const std::map<std::string, std::string> &now)
{
    std::string text;
    for (const auto &[key, value] : was) {
        const auto it = now.find(key);
        const std::string current = it == now.end() ? "(none)" : it->second;
        if (current != value)
            text += (text.empty() ? "" : "; ") + key + " was " + value + ", is now " + current;
    }
    return text.empty() ? "its task data differ" : text;
}

void TrainingLoop::setAside(const std::string &path)
{
    std::error_code error;
    std::filesystem::rename(path, path + ".unusable", error);
}

void TrainingLoop::addNote(const std::string &note)
{
    m_note = m_note.empty() ? note : m_note + "; " + note;
}

} // namespace headlab::detail
