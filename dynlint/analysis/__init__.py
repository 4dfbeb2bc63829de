"""What rules and fixes ask of the code: which values are tensors, what aliases what, which functions
torch.compile traces (regions), the names of torch APIs. Built on linter; knows torch's names, never imports torch."""
